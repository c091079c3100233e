import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';

/** Where `npm run build` puts the console's page (vite.config.mjs), from src/console or dist/console alike. */
export const CONSOLE_ASSETS = join(__dirname, '../../dist/console-web');

/**
 * Strict by construction: the page loads only its own script and stylesheet and talks only to this origin; no
 * inline script or style (uPlot and Preact set styles through the DOM, which CSP allows); never framed.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * Serves the console's static files at /console (GET and HEAD only; its sign-in API is a Nest route under
 * /console/api). The page's HTML is never cached, so a new build is picked up; hashed assets are immutable.
 * `/console` itself (the address docs/console.md and the quickstart print) is sent on to `/console/`: the page's
 * assets are addressed under it, and a browser keeps the URL's #fragment across the redirect.
 */
export function installConsole(app: Express): void {
  const assets = express.static(CONSOLE_ASSETS, {
    index: 'index.html',
    redirect: false,
    setHeaders: (res, path) =>
      res.setHeader(
        'cache-control',
        path.endsWith('.html') ? 'no-store' : 'public, max-age=31536000, immutable',
      ),
  });
  app.use('/console', (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path.startsWith('/api/')) return next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const [pathname, query] = splitQuery(req.originalUrl);
    if (pathname === '/console') {
      res.redirect(301, `/console/${query}`);
      return;
    }
    if (!existsSync(join(CONSOLE_ASSETS, 'index.html'))) {
      res.status(404).type('text/plain').send('The console is not built: run `npm run build`.\n');
      return;
    }
    assets(req, res, next);
  });
}

/** `/console?a=b` -> ['/console', '?a=b']. */
function splitQuery(url: string): [string, string] {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}
