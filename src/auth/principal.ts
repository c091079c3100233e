/** Who is calling: the team token's stable id, its team, and the model globs the team may use. */
export interface Principal {
  tokenId: string;
  teamId: string;
  models: readonly string[];
}
