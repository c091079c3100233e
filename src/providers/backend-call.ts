import type { Backend, UpstreamCall } from './provider-adapter';
import type { UpstreamResponse } from './upstream-client';

/** Sends one call to a backend; a non-2xx answer becomes the error the client gets (the family's own mapping). */
export async function sendToBackend(
  backend: Backend,
  call: UpstreamCall,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const upstream = await backend.client.send(call, signal);
  if (upstream.status >= 200 && upstream.status < 300) return upstream;
  const text = await upstream.body.text().catch(() => '');
  throw backend.adapter.mapError(upstream.status, text, upstream.headers);
}
