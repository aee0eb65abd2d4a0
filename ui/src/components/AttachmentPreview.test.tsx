import { beforeEach, describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/react';
import { imageAttachment, installBackend, videoAttachment } from '../test/fixtures';
import { callsOf, commands } from '../test/tauriMock';
import { clockDuration } from '../lib/format';
import { AttachmentPreview } from './AttachmentPreview';

beforeEach(() => {
  installBackend();
});

describe('attachment previews', () => {
  it('shows a video by its first frame (decoded by the engine) and its length', async () => {
    commands.set('attachment_thumbnail', () => [137, 80, 78, 71]);
    render(<AttachmentPreview attachment={videoAttachment} />);
    const preview = screen.getByTestId('video-attachment');
    expect(preview.textContent).toBe('1:05');
    await waitFor(() => expect(preview.querySelector('img')).not.toBeNull());
    expect(preview.querySelector('img')?.getAttribute('alt')).toBe('Video clip.mp4, 1:05');
    expect(callsOf('attachment_thumbnail').at(-1)).toEqual({ hash: videoAttachment.hash });
    expect(callsOf('attachment_bytes').map((args) => args.hash)).not.toContain(videoAttachment.hash);
  });

  it('keeps a labelled placeholder when the first frame cannot be decoded', async () => {
    commands.set('attachment_thumbnail', () => Promise.reject(new Error('damaged')));
    render(<AttachmentPreview attachment={{ ...videoAttachment, hash: 'broken1' }} />);
    await waitFor(() => expect(callsOf('attachment_thumbnail').length).toBeGreaterThan(0));
    expect(screen.getByRole('img', { name: 'Video clip.mp4, 1:05' })).toBeTruthy();
  });

  it('shows images from their own bytes', async () => {
    render(<AttachmentPreview attachment={imageAttachment} />);
    await waitFor(() => expect(screen.getByRole('img', { name: 'cat.png' })).toBeTruthy());
  });

  it('writes lengths as players do', () => {
    expect(clockDuration(4_200)).toBe('0:04');
    expect(clockDuration(65_400)).toBe('1:05');
    expect(clockDuration(3_725_000)).toBe('1:02:05');
  });
});
