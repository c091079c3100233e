import { useState } from 'preact/hooks';

/** A token's secret, shown once (it is in the answer that issued or rotated it only), with a copy button. */
export function SecretOnce({ id, token, onDone }: { id: string; token: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(token);
    setCopied(true);
  };
  return (
    <div class="secret" role="alert">
      <p>The secret of {id}: copy it now, it is never shown again.</p>
      <code data-testid="token-secret">{token}</code>
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
