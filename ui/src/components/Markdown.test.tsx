import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, waitFor } from '@testing-library/react';
import { Markdown, splitBlocks } from './Markdown';

afterEach(cleanup);

/** Nothing in the tree can run script: no script elements, handlers, or javascript: URLs. */
function expectInert(container: HTMLElement) {
  expect(container.querySelector('script, iframe, object, embed, style')).toBeNull();
  for (const element of container.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      expect(attribute.name.startsWith('on'), `${element.tagName} ${attribute.name}`).toBe(false);
      expect(attribute.value.toLowerCase()).not.toContain('javascript:');
    }
  }
}

describe('Markdown', () => {
  it.each([
    '<img src=x onerror=alert(1)>',
    '<script>alert(1)</script>',
    '[x](javascript:alert(1))',
    '<a href="javascript:alert(1)">x</a>',
    '<div onclick="alert(1)">raw <b>html</b></div>',
    '<iframe src="https://example.com"></iframe>',
    '![x](javascript:alert(1))',
    '[x](  JaVaScRiPt:alert(1))',
    '<svg><script>alert(1)</script></svg>',
    '$\\href{javascript:alert(1)}{x}$',
  ])('renders %s inertly', (source) => {
    const { container } = render(<Markdown text={source} />);
    expectInert(container);
    expect(container.querySelector('img, b, div[onclick], iframe, svg')).toBeNull();
  });

  it('shows raw HTML as the literal text the model wrote', () => {
    const { container } = render(<Markdown text={'Use a <br> tag, or <b onclick="x">this</b>.'} />);
    expect(container.textContent).toContain('Use a <br> tag, or <b onclick="x">this</b>.');
    expect(container.querySelector('br, b')).toBeNull();
  });

  it('renders GitHub tables', () => {
    const { container } = render(<Markdown text={'| a | b |\n|---|---|\n| 1 | 2 |'} />);
    expect(container.querySelector('table th')?.textContent).toBe('a');
    expect(container.querySelectorAll('table td')).toHaveLength(2);
  });

  it('highlights code and copies it', async () => {
    const writeText = vi.fn(async () => {});
    Object.assign(navigator, { clipboard: { writeText } });
    const { container, getByTestId } = render(<Markdown text={'```js\nconst x = 1;\n```'} />);
    expect(container.querySelector('pre code.hljs.language-js')).not.toBeNull();
    expect(container.querySelector('.hljs-keyword')?.textContent).toBe('const');
    fireEvent.click(getByTestId('code-copy-button'));
    expect(writeText).toHaveBeenCalledWith('const x = 1;');
    await waitFor(() => expect(getByTestId('code-copy-button').textContent).toBe('Copied'));
  });

  it('renders math with KaTeX', () => {
    const { container } = render(<Markdown text={'Inline $x^2$ and\n\n$$\n\\frac{1}{2}\n$$'} />);
    expect(container.querySelectorAll('.katex').length).toBeGreaterThanOrEqual(2);
    expect(container.querySelector('.katex-display')).not.toBeNull();
    expectInert(container);
  });

  it('splits a streaming reply at blank lines, never inside code, math or an indented continuation', () => {
    const text = 'Intro.\n\n```py\na = 1\n\nb = 2\n```\n\n$$\nx\n\ny\n$$\n\n1. one\n\n   more of one\n2. two';
    expect(splitBlocks(text)).toEqual(['Intro.\n', '```py\na = 1\n\nb = 2\n```\n', '$$\nx\n\ny\n$$\n', '1. one\n\n   more of one\n2. two']);
    expect(splitBlocks('')).toEqual(['']);
  });

  it('renders a streaming reply block by block as it renders the finished one', () => {
    const text = 'Intro with $x^2$.\n\n```js\nconst x = 1;\n\nx;\n```\n\n- a\n- b\n\n3. three\n4. four';
    const streaming = render(<Markdown text={text} streaming />).container;
    const finished = render(<Markdown text={text} />).container;
    // The same elements; only the newlines between top-level blocks differ.
    const elements = (html: string) => html.replace(/>\n+</g, '><');
    expect(elements(streaming.innerHTML)).toBe(elements(finished.innerHTML));
  });
});
