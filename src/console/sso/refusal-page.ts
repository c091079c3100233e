import type { Request, Response } from 'express';
import { GatewayException } from '../../core/errors/gateway.exception';
import { SECURITY_HEADERS } from '../console-static';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * A refused SSO sign-in, answered to a browser (which came here by the provider's redirect, not from the page's
 * scripts) as a short page with the error's status and message and a way back; to anything else, thrown on to the
 * exception filter for the usual error JSON.
 */
export function refuse(req: Request, res: Response, error: unknown): void {
  if (
    !(error instanceof GatewayException) ||
    !req.accepts('html') ||
    req.accepts(['json', 'html']) === 'json'
  )
    throw error;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  res
    .status(error.status)
    .setHeader('cache-control', 'no-store')
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title><link rel="icon" href="data:,"></head>` +
        `<body><h1>Sign-in refused</h1><p role="alert">${escapeHtml(error.message)}</p>` +
        `<p><a href="/console/">Back to the console</a></p></body></html>\n`,
    );
}
