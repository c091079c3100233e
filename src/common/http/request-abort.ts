import type { Request, Response } from 'express';

/**
 * The controllers behind the signals requestAbortSignal made, so the gateway's own cuts (the total timeout) abort
 * the request's signal itself instead of chaining a second AbortController to it: each AbortController is an
 * EventTarget, and two per request plus their listeners were ~20 us of CPU per request under load.
 */
const controllers = new WeakMap<AbortSignal, AbortController>();

/** The requests each shutdown signal cuts: one listener on it for all of them, not one per request. */
const cutOnShutdown = new WeakMap<AbortSignal, Set<AbortController>>();

function cutsOnShutdown(shutdownCut: AbortSignal): Set<AbortController> {
  let requests = cutOnShutdown.get(shutdownCut);
  if (!requests) {
    const set = (requests = new Set());
    cutOnShutdown.set(shutdownCut, set);
    shutdownCut.addEventListener(
      'abort',
      () => {
        for (const controller of set) controller.abort(shutdownCut.reason);
        set.clear();
      },
      { once: true },
    );
  }
  return requests;
}

/**
 * The abort signal of a billable request: it fires when the client goes away before the response is complete
 * (recorded on the ledger as the client's doing), when the gateway's shutdown grace period ends (then its
 * reason is the `server_shutting_down` GatewayException the client gets), or when the gateway cuts it
 * (`cutRequest`, the total timeout). One helper for every operation.
 */
export function requestAbortSignal(req: Request, res: Response, shutdownCut: AbortSignal): AbortSignal {
  const controller = new AbortController();
  controllers.set(controller.signal, controller);
  const onShutdown = cutsOnShutdown(shutdownCut);
  if (shutdownCut.aborted) controller.abort(shutdownCut.reason);
  else onShutdown.add(controller);
  // Emitted once per response: `on` holds no once-wrapper for a stream's life.
  res.on('close', () => {
    onShutdown.delete(controller);
    if (!res.writableFinished && !controller.signal.aborted) {
      req.exchange.clientLeft();
      controller.abort();
    }
  });
  return controller.signal;
}

/** Aborts a request's signal (one requestAbortSignal made) with the gateway's reason; false for any other signal. */
export function cutRequest(signal: AbortSignal, reason: unknown): boolean {
  const controller = controllers.get(signal);
  if (!controller) return false;
  controller.abort(reason);
  return true;
}

/** Whether `signal` is a request's own (so cutRequest can abort it). */
export function isRequestSignal(signal: AbortSignal): boolean {
  return controllers.has(signal);
}
