// The microphone recorder's capture (ui/src/state/useRecorder.ts): the first channel's
// samples, posted to the page in blocks of 4096 frames (about 85 ms at 48 kHz) rather than
// every 128-frame render quantum. A message {flush: true} is answered with {last: samples},
// what is left, after every block before it (a port keeps its order). Served from the
// app's own origin, as the content security policy wants of scripts.
class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.block = new Float32Array(4096);
    this.filled = 0;
    this.port.onmessage = (event) => {
      if (event.data && event.data.flush) {
        this.port.postMessage({ last: this.block.slice(0, this.filled) });
        this.filled = 0;
      }
    };
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) {
      let read = 0;
      while (read < channel.length) {
        const taken = Math.min(channel.length - read, this.block.length - this.filled);
        this.block.set(channel.subarray(read, read + taken), this.filled);
        this.filled += taken;
        read += taken;
        if (this.filled === this.block.length) {
          this.port.postMessage(this.block.slice());
          this.filled = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor('confab-capture', CaptureProcessor);
