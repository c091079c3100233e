/**
 * Commands sent together, each settled as `[error, result]` like a pipeline's `exec()`. Not a pipeline: on a
 * Redis Cluster one pipeline must stay within one slot, and a batch spans teams (slots). The command
 * connection auto-pipelines, so commands issued in the same tick still leave in one write per node.
 */
export function batch(commands: Array<Promise<unknown>>): Promise<Array<[Error | null, unknown]>> {
  return Promise.all(
    commands.map((command) =>
      command.then(
        (result): [null, unknown] => [null, result],
        (error: Error): [Error, unknown] => [error, undefined],
      ),
    ),
  );
}
