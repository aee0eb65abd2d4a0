// Model output as markdown. Model text is untrusted: raw HTML is never parsed (no rehype-raw;
// it is shown as the literal text the model wrote), URLs go through react-markdown's
// safe-protocol filter, links open only after a confirmation (ExternalLink.tsx), and the tree is
// sanitised *before* KaTeX and highlight.js run, so only their own output (built from text)
// adds classes and styles. Remote images are not loaded (a private app makes no requests).
import { memo, useEffect, useState, type ComponentPropsWithoutRef } from 'react';
import ReactMarkdown, { type Components, type ExtraProps } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import rehypeSanitize, { defaultSchema } from 'rehype-sanitize';
import rehypeKatex from 'rehype-katex';
import rehypeHighlight from 'rehype-highlight';
import type { Element, ElementContent } from 'hast';
import 'katex/dist/katex.min.css';
import { CopyButton } from './CopyButton';
import { ExternalLink } from './ExternalLink';

interface MarkdownNode {
  type: string;
  value?: string;
  children?: MarkdownNode[];
}

/** Raw HTML in model output shown as text ("use a <br> tag"), not dropped or interpreted. */
function remarkHtmlAsText() {
  const walk = (node: MarkdownNode) => {
    if (node.type === 'html') node.type = 'text';
    node.children?.forEach(walk);
  };
  return walk;
}

/** The default (GitHub's) schema, plus the classes remark-math marks math with. */
const schema = {
  ...defaultSchema,
  attributes: {
    ...defaultSchema.attributes,
    code: [['className', /^language-./, 'math-inline', 'math-display']],
  },
};

function textOf(node: Element | ElementContent): string {
  if (node.type === 'text') return node.value;
  if (node.type === 'element') return node.children.map(textOf).join('');
  return '';
}

function CodeBlock({ node, children, ...props }: ComponentPropsWithoutRef<'pre'> & ExtraProps) {
  const code = node ? textOf(node) : '';
  return (
    <div className="code-block">
      <div className="code-block-bar">
        <CopyButton text={() => code.replace(/\n$/, '')} testId="code-copy-button" />
      </div>
      <pre {...props}>{children}</pre>
    </div>
  );
}

function Image({ alt }: ComponentPropsWithoutRef<'img'> & ExtraProps) {
  return <span className="muted">[image{alt ? `: ${alt}` : ''}]</span>;
}

function Table({ node: _node, ...props }: ComponentPropsWithoutRef<'table'> & ExtraProps) {
  return (
    <div className="table-scroll">
      <table {...props} />
    </div>
  );
}

const components: Components = { pre: CodeBlock, a: ExternalLink, img: Image, table: Table };

/** One piece of markdown, rendered only when its text changes. */
const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  return (
    <ReactMarkdown
      remarkPlugins={[remarkGfm, remarkMath, remarkHtmlAsText]}
      rehypePlugins={[[rehypeSanitize, schema], rehypeKatex, [rehypeHighlight, { detect: false }]]}
      components={components}
    >
      {text}
    </ReactMarkdown>
  );
});

/**
 * Splits markdown into top-level blocks: at a blank line followed by an unindented line, never
 * inside a code fence or $$ math. A streaming reply re-renders only its last block (parsing the
 * whole reply on every token costs time quadratic in its length, taken from the engine).
 */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  let math = false;
  let blankBefore = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!fence && !math && blankBefore && /^\S/.test(line) && current.length > 0) {
      blocks.push(current.join('\n'));
      current = [];
    }
    current.push(line);
    blankBefore = trimmed === '';
    const marker = /^(`{3,}|~{3,})/.exec(trimmed)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    } else if (marker) {
      fence = marker;
    } else if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) {
      math = !math;
    }
  }
  blocks.push(current.join('\n'));
  return blocks;
}

/** Model output as markdown; while `streaming`, block by block so finished blocks keep their render. */
export const Markdown = memo(function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  return (
    <div className="markdown">
      {streaming ? splitBlocks(text).map((block, index) => <MarkdownBlock key={index} text={block} />) : <MarkdownBlock text={text} />}
    </div>
  );
});

/** A reply with a bit of everything markdown draws: headings, emphasis, a link, code, math, a table, a list. */
const WARM_UP_SAMPLE = [
  '## Warm-up',
  'Some *emphasis*, **strength**, `code`, [a link](https://example.com) and $e^{i\\pi} + 1 = 0$.',
  '```python\ndef area(r: float) -> float:\n    return 3.14159 * r ** 2\n```',
  '$$\\int_a^b f(x)\\,dx \\approx \\frac{b - a}{2}\\left(f(a) + f(b)\\right)$$',
  '| rule | error |\n|---|---|\n| trapezoid | $O(h^2)$ |',
  '1. one\n2. two\n\n- [x] done\n- [ ] to do\n\n> quoted',
].join('\n\n');

/**
 * Draws a sample reply once, out of sight and out of reach, soon after launch, then removes it.
 * The first markdown a window draws costs about 100 ms on a slow machine (the parsers'
 * code compiled, highlight.js and KaTeX set up, their fonts loaded); without this, that lands
 * between the first reply's first token and the screen, while the engine needs the CPU.
 */
export function MarkdownWarmUp() {
  const [phase, setPhase] = useState<'waiting' | 'drawing' | 'done'>('waiting');
  useEffect(() => {
    if (phase === 'waiting') {
      const timer = setTimeout(() => setPhase('drawing'), 300);
      return () => clearTimeout(timer);
    }
    if (phase === 'drawing') {
      // Kept for two frames: drawn and painted, fonts included.
      let frame = requestAnimationFrame(() => (frame = requestAnimationFrame(() => setPhase('done'))));
      return () => cancelAnimationFrame(frame);
    }
  }, [phase]);
  if (phase !== 'drawing') return null;
  return (
    <div className="markdown-warm-up" aria-hidden="true" inert>
      <Markdown text={WARM_UP_SAMPLE} streaming />
    </div>
  );
}
