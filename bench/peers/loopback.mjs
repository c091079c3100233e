// Preloaded into peers that listen on every interface by default (Portkey's gateway calls
// serve({ port }) with no hostname): a listen() given only a port binds to 127.0.0.1 instead.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (args[0] && typeof args[0] === 'object' && args[0].port !== undefined && !args[0].host)
    args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
