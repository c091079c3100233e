import type { Request, Response } from 'express';

/**
 * The abort signal of a billable request: it fires when the client goes away before the response is complete
 * (recorded on the ledger as the client's doing), or when the gateway's shutdown grace period ends (then its
 * reason is the `server_shutting_down` GatewayException the client gets). One helper for every operation.
 */
export function requestAbortSignal(req: Request, res: Response, shutdownCut: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const onCut = () => controller.abort(shutdownCut.reason);
  if (shutdownCut.aborted) onCut();
  else shutdownCut.addEventListener('abort', onCut, { once: true });
  res.once('close', () => {
    shutdownCut.removeEventListener('abort', onCut);
    if (!res.writableFinished && !controller.signal.aborted) {
      req.ledger.clientLeft();
      controller.abort();
    }
  });
  return controller.signal;
}
