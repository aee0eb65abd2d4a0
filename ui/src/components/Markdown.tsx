// Model output as markdown. Model text is untrusted: raw HTML is never parsed (no rehype-raw;
// it is shown as the literal text the model wrote), URLs go through react-markdown's
// safe-protocol filter, links open only after a confirmation (ExternalLink.tsx), and the tree is
// sanitised *before* KaTeX and highlight.js run, so only their own output (built from text)
// adds classes and styles. Remote images are not loaded (a private app makes no requests).
import { memo, type ComponentPropsWithoutRef } from 'react';
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

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkMath, remarkHtmlAsText]}
        rehypePlugins={[[rehypeSanitize, schema], rehypeKatex, [rehypeHighlight, { detect: false }]]}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});
