-- Schema 7: a denoising model's reply writes canvases of tokens in parallel; its stats keep the
-- denoising steps each canvas took, comma-separated ("14,12,16"); NULL for other replies.
ALTER TABLE messages ADD COLUMN steps_per_canvas TEXT;
