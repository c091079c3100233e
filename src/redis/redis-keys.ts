/**
 * Every Redis key name in one place. The prefix isolates deployments (and test runs)
 * sharing one Redis; the `{...}` hash tag keeps a team's keys in one Cluster slot.
 */
export class RedisKeys {
  constructor(private readonly prefix: string) {}
  team(teamId: string): string {
    return `${this.prefix}team:{${teamId}}`;
  }
  teamTokens(teamId: string): string {
    return `${this.prefix}team:{${teamId}}:tokens`;
  }
  teamIndex(): string {
    return `${this.prefix}teams`;
  }
  token(tokenId: string): string {
    return `${this.prefix}token:{${tokenId}}`;
  }
  usageDay(teamId: string, day: string): string {
    return `${this.prefix}usage:{${teamId}}:${day}`;
  }
  invalidationChannel(): string {
    return `${this.prefix}auth:invalidate`;
  }
}
