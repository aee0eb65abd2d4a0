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
    Promise.resolve(text())
      .then((value) => navigator.clipboard.writeText(value))
      .then(
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
