import { useEffect, useState } from 'react';

/** Copies `text` (which may have to be fetched first), and says "Copied" for a moment. */
export function CopyButton({ text, label = 'Copy', testId }: { text: () => string | Promise<string>; label?: string; testId: string }) {
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);

  const copy = () => {
    const write = (value: string) => navigator.clipboard?.writeText(value) ?? Promise.reject(new Error('no clipboard'));
    // A string is written at once (inside the click, as browsers want); a promise when it comes.
    const value = text();
    (typeof value === 'string' ? write(value) : value.then(write)).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };

  return (
    <button type="button" className="ghost small" data-testid={testId} onClick={copy} title={label}>
      {copied ? 'Copied' : label}
    </button>
  );
}
