import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, waitFor } from '@testing-library/react';
import { Markdown } from './Markdown';

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
});
