import { beforeEach, describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/react';
import { contextUse, imageAttachment, installBackend, pdfAttachment } from '../test/fixtures';
import { callsOf, commands, invoke } from '../test/tauriMock';
import { isDocumentMime } from '../lib/capabilities';
import { AttachmentChip, documentSummary } from './AttachmentChip';
import { ContextWarning } from './ContextMeter';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

describe('document attachments', () => {
  it('are told from media by the MIME type the documents crate stored them under', () => {
    expect(isDocumentMime('application/pdf')).toBe(true);
    expect(isDocumentMime('text/markdown')).toBe(true);
    expect(isDocumentMime('text/x-source')).toBe(true);
    expect(isDocumentMime('application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toBe(true);
    expect(isDocumentMime('image/png')).toBe(false);
    expect(isDocumentMime('video/gif')).toBe(false);
  });

  it('show their name, format and pages on the chip', async () => {
    commands.set('document_info', () => ({ format: 'PDF', pages: 2, notes: ['page 2 has no text'] }));
    render(<AttachmentChip attachment={pdfAttachment} onRemove={() => {}} />);
    const chip = screen.getByTestId('attachment-chip');
    expect(chip.textContent).toContain('report.pdf');
    await waitFor(() => expect(chip.textContent).toContain('PDF · 2 pages · '));
    expect(chip.dataset.pages).toBe('2');
    expect(chip.getAttribute('title')).toBe('page 2 has no text');
    expect(callsOf('document_info').at(-1)).toEqual({ hash: 'pdf123' });
    expect(screen.getByTestId('document-attachment')).toBeTruthy();
  });

  it('media chips ask for no document info', () => {
    render(<AttachmentChip attachment={imageAttachment} onRemove={() => {}} />);
    expect(callsOf('document_info')).toEqual([]);
  });

  it('summaries read naturally', () => {
    expect(documentSummary({ format: 'PDF', pages: 1, notes: [] })).toBe('PDF · 1 page');
    expect(documentSummary({ format: 'Markdown', pages: null, notes: [] })).toBe('Markdown');
  });

  it('a document too long for the model is named, with what to do', () => {
    const use = { ...contextUse(40, 0), alone: 9000, used: 9040 };
    render(<ContextWarning use={use} onNewChat={() => {}} onSendAnyway={() => {}} documents={['big.pdf']} />);
    const warning = screen.getByTestId('document-too-long');
    expect(warning.textContent).toContain('This message with big.pdf is about 9,000 tokens: the document does not fit the model');
    expect(warning.textContent).toContain('Attach a shorter document or the part you need');
  });
});
