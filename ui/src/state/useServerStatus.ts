// The local server's status for the header, polled while the window is open: it changes with
// other programs' requests, which send the window no events.
import { useEffect, useState } from 'react';
import { serverStatus, type ServerStatus } from '../ipc';

/** How often the header asks. */
export const SERVER_POLL_MS = 1500;

export function useServerStatus(): ServerStatus | null {
  const [status, setStatus] = useState<ServerStatus | null>(null);
  useEffect(() => {
    let live = true;
    const poll = () =>
      serverStatus().then(
        (next) => live && setStatus(next),
        () => live && setStatus(null),
      );
    void poll();
    const timer = setInterval(() => void poll(), SERVER_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  return status;
}
