/** What a team's (or a seeded token's) id may be: lower case, digits, `_` and `-`, up to 63 characters. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
