#!/usr/bin/env python3
"""A corpus of tiny videos, and the frames the reference decoder reads from them.

    /opt/confab-ref/bin/pip install av        # PyAV 18 (its wheel bundles FFmpeg 8, libx264, libx265)
    /opt/confab-ref/bin/python tests/reference/make_video_corpus.py
    /opt/confab-ref/bin/python tests/reference/make_video_corpus.py hevc   # the HEVC clips alone

(the reference venv, with PyAV, whose `frame.to_ndarray(format="rgb24")` is what transformers'
PyAV video loader returns, and Pillow for GIF/WebP). Offline and deterministic (libx264/libx265
single-threaded); CI never runs it, the outputs are committed. Writes
tests/reference/fixtures/video/, which crates/media/tests/video.rs checks the media crate against:

- h264_baseline.mp4: 64x48, 20 frames at 10 fps, Constrained Baseline (CAVLC, no B-frames), an
  IDR every 10 frames, moov first ("faststart", as phones write it).
- h264_high.mp4: 96x54 (the SPS crops 64 rows to 54), High profile (CABAC, 8x8 transform,
  2 B-frames, so decode order != display order), BT.709 signalled in the VUI, 20 frames at 10 fps.
- h264_main.mov: QuickTime ('qt  ' brand), 64x48 Main profile with B-frames, plus an AAC track.
- h264_long.mp4: 64x48 High profile with B-frames, 60 frames in 6 groups of pictures (what the
  decoder splits into pieces decoded in parallel); reference frames 0, 25 and 59.
- h264_fragmented.mp4: the same stream as h264_baseline.mp4, fragmented (empty moov, a moof
  per group of pictures), as browsers' MediaRecorder writes MP4.
- h264_rotated.mp4: h264_baseline.mp4 with the tkhd display matrix of a phone held upright
  (90 degrees clockwise): stored 64x48, displayed 48x64.
- {name}.f{index}.png (not for the rotated and fragmented files, whose stream is the baseline one): PyAV's rgb24 frame at that display index (stored orientation);
  {name}.f{index}.yuv: its Y, U and V planes (I420, cropped, no padding).
- animated.gif: 4 frames, 40x30, delays 100 ms, 0 ms (shown for 100 ms, as browsers do), 200 ms,
  50 ms; still.gif: one frame (an image, not a video); no_frames.gif: a screen and no frames.
- animated.webp: 3 frames, 40x30, 100/150/250 ms; its composited frames as Pillow gives them.
- HEVC (libx265, 'hvc1'), which macOS decodes (VideoToolbox) and other systems refuse:
  hevc.mp4: 64x48, 5 frames, Main, nothing signalled; hevc_main.mp4: 96x54 (coded 96x56, cropped
  by the SPS's conformance window), BT.709 limited, an IDR every 10 frames, 3 B-frames;
  hevc_open_gop.mov: QuickTime, BT.601 full range, a CRA picture at frame 10 whose leading
  frames reference the group before; hevc_main10.mp4: Main 10, BT.2020, 10 frames (RGB
  references only); hevc_rotated.mp4: hevc_main.mp4 turned 90 degrees clockwise by its tkhd.
  meta.json adds what FFmpeg reads from their headers (size, pixel format, matrix, range,
  keyframes, the frames' summed durations) and their hvcC's NAL arrays, parsed here.
- three_hours.mp4: two frames of H.264 whose mvhd/tkhd/mdhd say 3 h.
- wide.mp4: a one-frame H.264 MP4 whose SPS, avc1 and tkhd say 16000x2560 (41 MP), rewritten
  from a 64x48 one (its frame is never decoded); wide.gif: a GIF whose
  logical screen is 16000x2600 with two 1x1 frames.
- truncated.mp4: h264_baseline.mp4 cut in the middle of its mdat (moov intact).
- meta.json: every file's frames, size, fps and timestamps per PyAV/Pillow, and the versions.
"""

import io
import json
import struct
from pathlib import Path

import av
import numpy as np
import PIL
from PIL import Image

OUT = Path(__file__).parent / "fixtures" / "video"
FPS = 10
REFERENCE_INDICES = [0, 3, 9, 10, 14, 19]


def picture(t: int, width: int, height: int, seed: int = 5) -> np.ndarray:
    """Frame t: shading that drifts, a saturated square that moves, a little texture."""
    rng = np.random.default_rng(seed + t)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 128 + 90 * np.sin((x + 2 * t) / 9.0)
    g = 255 * y / height * 0.8 + 20 * np.cos((x - y + t) / 5.0)
    b = 160 - 100 * x / width + 3 * t
    image = np.stack([r, g, b], -1)
    side = max(6, height // 4)
    left = (3 * t) % (width - side)
    top = (2 * t) % (height - side)
    image[top : top + side, left : left + side] = [235, 30, 40]
    image[height - 6 : height - 2, 4 : width - 4] = [20, 20, 220]
    image += rng.normal(0, 3, image.shape)
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def encode(path: Path, codec: str, width: int, height: int, frames: int, options: dict,
           container_format: str | None = None, container_options: dict | None = None,
           colorspace: str | None = None, audio: bool = False, flat: bool = False,
           codec_tag: str | None = None, pix_fmt: str = "yuv420p", source_colour: tuple | None = None) -> None:
    """`source_colour`: (PyAV Colorspace, ColorRange) names the RGB pictures are converted with,
    for an encoder told to signal the same in its VUI (libx265 through x265-params)."""
    with av.open(str(path), "w", format=container_format, options=container_options or {}) as out:
        stream = out.add_stream(codec, rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.thread_count = 1
        if codec_tag:
            stream.codec_tag = codec_tag
        if colorspace == "bt709":
            stream.codec_context.colorspace = av.video.reformatter.Colorspace.ITU709
            stream.codec_context.color_range = 1  # limited (MPEG)
        if audio:
            sound = out.add_stream("aac", rate=16000, layout="mono")
        for t in range(frames):
            rgb = np.full((height, width, 3), 90, np.uint8) if flat else picture(t, width, height)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            if colorspace == "bt709":
                frame = frame.reformat(format="yuv420p", dst_colorspace="ITU709", dst_color_range="MPEG")
                frame.colorspace = av.video.reformatter.Colorspace.ITU709
            elif source_colour:
                space, color_range = source_colour
                frame = frame.reformat(format=pix_fmt, dst_colorspace=space, dst_color_range=color_range)
            frame.pts = t
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
        if audio:
            samples = (0.3 * np.sin(2 * np.pi * 440 * np.arange(frames * 1600) / 16000)).astype(np.float32)
            for i in range(0, len(samples), 1024):
                chunk = av.AudioFrame.from_ndarray(samples[None, i : i + 1024], format="fltp", layout="mono")
                chunk.sample_rate, chunk.pts = 16000, i
                out.mux(sound.encode(chunk))
            out.mux(sound.encode())


def reference_frames(path: Path, save: bool = True, indices: list = REFERENCE_INDICES) -> dict:
    """Every frame's time; the RGB and planes of `indices` (display order)."""
    times, saved = [], []
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        for index, frame in enumerate(container.decode(stream)):
            times.append(float(frame.time))
            if not save or index not in indices:
                continue
            rgb = frame.to_ndarray(format="rgb24")
            Image.fromarray(rgb, "RGB").save(OUT / f"{path.name}.f{index}.png")
            saved.append(index)
            if frame.format.name not in ("yuv420p", "yuvj420p"):
                continue  # 10-bit planes: the RGB is the reference
            planes = []
            for plane_index, plane in enumerate(frame.planes):
                w, h = (frame.width, frame.height) if plane_index == 0 else (frame.width // 2, frame.height // 2)
                rows = np.frombuffer(bytes(plane), np.uint8).reshape(-1, plane.line_size)
                planes.append(rows[:h, :w].tobytes())
            (OUT / f"{path.name}.f{index}.yuv").write_bytes(b"".join(planes))
        info = {
            "frames": len(times),
            "stored_size": [stream.codec_context.width, stream.codec_context.height],
            "profile": stream.codec_context.profile,
            "colorspace": str(stream.codec_context.colorspace),
            "timestamps": times,
            "reference_indices": saved,
        }
    return info


def boxes(data: bytes, start: int, end: int):
    """The (type, start, end) of each box between start and end."""
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8 : at + 16])[0]
            header = 16
        elif size == 0:
            size = end - at
        yield kind.decode("latin1"), at, at + size, header
        at += size


def find(data: bytes, path: list, start: int = 0, end: int | None = None):
    """Every box at `path` (e.g. ["moov", "trak", "tkhd"])."""
    end = len(data) if end is None else end
    for kind, s, e, header in boxes(data, start, end):
        if kind == path[0]:
            if len(path) == 1:
                yield s, e, header
            else:
                yield from find(data, path[1:], s + header, e)


def patch_rotation(data: bytearray) -> None:
    """Writes a 90-degrees-clockwise display matrix into the video track's tkhd."""
    for s, e, h in find(data, ["moov", "trak", "tkhd"]):
        version = data[s + h]
        matrix_at = s + h + 4 + (32 if version == 1 else 20) + 8 + 2 + 2 + 2 + 2
        # a b u / c d v / x y w, 16.16 and 2.30 fixed point: (0, 1, 0 / -1, 0, 0 / 0, 0, 1)
        matrix = struct.pack(">9i", 0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000)
        data[matrix_at : matrix_at + 36] = matrix


def patch_duration(data: bytearray, seconds: float) -> None:
    """Makes mvhd, tkhd and mdhd say `seconds`, in their own time scales."""
    (mvhd, _, h), = find(data, ["moov", "mvhd"])
    assert data[mvhd + h] == 0
    movie_scale = struct.unpack(">I", data[mvhd + h + 12 : mvhd + h + 16])[0]
    data[mvhd + h + 16 : mvhd + h + 20] = struct.pack(">I", int(seconds * movie_scale))
    for s, _, h in find(data, ["moov", "trak", "tkhd"]):
        assert data[s + h] == 0
        data[s + h + 20 : s + h + 24] = struct.pack(">I", int(seconds * movie_scale))
    for s, _, h in find(data, ["moov", "trak", "mdia", "mdhd"]):
        assert data[s + h] == 0
        scale = struct.unpack(">I", data[s + h + 12 : s + h + 16])[0]
        data[s + h + 16 : s + h + 20] = struct.pack(">I", int(seconds * scale))


class Bits:
    """Big-endian bits, with H.264's exp-Golomb codes."""

    def __init__(self, data: bytes = b""):
        self.bits = "".join(f"{b:08b}" for b in data)
        self.at = 0

    def u(self, n: int) -> int:
        value = int(self.bits[self.at : self.at + n], 2)
        self.at += n
        return value

    def ue(self) -> int:
        zeros = 0
        while self.bits[self.at] == "0":
            zeros += 1
            self.at += 1
        return self.u(zeros + 1) - 1

    def put(self, value: int, n: int) -> None:
        self.bits += f"{value:0{n}b}"

    def put_ue(self, value: int) -> None:
        code = f"{value + 1:b}"
        self.bits += "0" * (len(code) - 1) + code

    def bytes(self) -> bytes:
        assert len(self.bits) % 8 == 0
        return bytes(int(self.bits[i : i + 8], 2) for i in range(0, len(self.bits), 8))


def unescape(nal: bytes) -> bytes:
    return nal.replace(b"\0\0\3", b"\0\0")


def escape(rbsp: bytes) -> bytes:
    out, zeros = bytearray(), 0
    for b in rbsp:
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def resize_baseline_sps(sps: bytes, width_mbs: int, height_mbs: int) -> bytes:
    """The same Baseline SPS, saying another size in macroblocks (no cropping)."""
    r, w = Bits(unescape(sps[1:])), Bits()
    for n in (8, 8, 8):
        w.put(r.u(n), n)
    assert sps[1] == 66, "only a Baseline SPS has no chroma/scaling fields to carry"
    w.put_ue(r.ue())  # seq_parameter_set_id
    w.put_ue(r.ue())  # log2_max_frame_num_minus4
    poc_type = r.ue()
    w.put_ue(poc_type)
    assert poc_type in (0, 2)
    if poc_type == 0:
        w.put_ue(r.ue())
    w.put_ue(r.ue())  # max_num_ref_frames
    w.put(r.u(1), 1)  # gaps_in_frame_num_value_allowed_flag
    r.ue(), r.ue()
    w.put_ue(width_mbs - 1)
    w.put_ue(height_mbs - 1)
    frame_mbs_only = r.u(1)
    assert frame_mbs_only == 1
    w.put(1, 1)
    w.put(r.u(1), 1)  # direct_8x8_inference_flag
    assert r.u(1) == 0, "no cropping in the source SPS"
    w.put(0, 1)
    rest = r.bits[r.at :].rstrip("0")  # VUI as it was; then a fresh stop bit
    w.bits += rest
    w.bits += "0" * (-len(w.bits) % 8)
    return sps[:1] + escape(w.bytes())


def parse_boxes(data: bytes) -> list:
    """[type, payload or children] for a box tree; containers are parsed, other boxes kept."""
    containers = {"moov", "trak", "mdia", "minf", "stbl", "edts", "dinf"}
    out = []
    for kind, s, e, header in boxes(data, 0, len(data)):
        payload = data[s + header : e]
        if kind in containers:
            out.append([kind, parse_boxes(payload)])
        elif kind == "stsd":
            out.append([kind, payload[:8], parse_boxes(payload[8:])])
        elif kind == "avc1":
            out.append([kind, payload[:78], parse_boxes(payload[78:])])
        else:
            out.append([kind, payload])
    return out


def write_boxes(tree: list) -> bytes:
    out = b""
    for node in tree:
        kind = node[0]
        if len(node) == 3:
            body = node[1] + write_boxes(node[2])
        elif isinstance(node[1], list):
            body = write_boxes(node[1])
        else:
            body = node[1]
        out += struct.pack(">I4s", len(body) + 8, kind.encode("latin1")) + body
    return out


def make_wide(path: Path, width: int, height: int) -> None:
    """A tiny H.264 MP4 whose headers (SPS, avc1, tkhd) say width x height; its frames are small
    and never decoded (the size limit refuses the file from its headers)."""
    encode(path, "libx264", 64, 48, 1, {"preset": "ultrafast", "profile": "baseline", "threads": "1"}, flat=True)
    tree = parse_boxes(path.read_bytes())
    assert [n[0] for n in tree][-1] == "moov", "moov after mdat, so growing it moves no sample"

    def visit(nodes):
        for node in nodes:
            if node[0] == "tkhd":
                node[1] = node[1][:-8] + struct.pack(">II", width << 16, height << 16)
            elif node[0] == "avc1":
                node[1] = node[1][:24] + struct.pack(">HH", width, height) + node[1][28:]
                for child in node[2]:
                    if child[0] == "avcC":
                        avcc = child[1]
                        length = struct.unpack(">H", avcc[6:8])[0]
                        sps = resize_baseline_sps(avcc[8 : 8 + length], width // 16, height // 16)
                        child[1] = avcc[:6] + struct.pack(">H", len(sps)) + sps + avcc[8 + length :]
            for child in node[1:]:
                if isinstance(child, list):
                    visit(child)

    visit(tree)
    path.write_bytes(write_boxes(tree))


def gif_frames() -> list:
    frames = []
    for t, colour in enumerate([(220, 30, 30), (30, 200, 40), (40, 40, 220), (230, 230, 230)]):
        image = Image.new("RGB", (40, 30), (20, 20, 20))
        image.paste(colour, (4 + 6 * t, 5, 18 + 6 * t, 25))
        frames.append(image)
    return frames


def make_gifs() -> dict:
    frames = gif_frames()
    # Pillow writes delays in centiseconds: 100 ms, 0, 200 ms, 50 ms.
    frames[0].save(OUT / "animated.gif", save_all=True, append_images=frames[1:], duration=[100, 0, 200, 50],
                   loop=0, optimize=False, disposal=1)
    frames[0].save(OUT / "still.gif")
    # Header, a 40x30 logical screen with no colour table, and the trailer: no image at all.
    (OUT / "no_frames.gif").write_bytes(b"GIF89a" + struct.pack("<HHBBB", 40, 30, 0, 0, 0) + b";")
    # A 16000x2600 logical screen holding two 1x1 images (an animation, so a video).
    screen = b"GIF89a" + struct.pack("<HHBBB", 16000, 2600, 0x80, 0, 0) + bytes([0, 0, 0, 255, 255, 255])
    delay = b"\x21\xf9\x04\x00" + struct.pack("<H", 10) + b"\x00\x00"
    image = b"," + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + bytes([2, 2, 0x4C, 0x01, 0])
    (OUT / "wide.gif").write_bytes(screen + delay + image + delay + image + b";")
    composited = []
    with Image.open(OUT / "animated.gif") as gif:
        for index in range(gif.n_frames):
            gif.seek(index)
            composited.append(gif.info.get("duration"))
            gif.convert("RGB").save(OUT / f"animated.gif.f{index}.png")
    return {"frames": len(frames), "size": [40, 30], "durations_ms": composited}


def make_webp() -> dict:
    frames = gif_frames()[:3]
    frames[0].save(OUT / "animated.webp", save_all=True, append_images=frames[1:], duration=[100, 150, 250],
                   loop=0, lossless=True)
    durations = []
    with Image.open(OUT / "animated.webp") as webp:
        for index in range(webp.n_frames):
            webp.seek(index)
            webp.load()
            durations.append(webp.info.get("duration"))
            webp.convert("RGB").save(OUT / f"animated.webp.f{index}.png")
    return {"frames": len(frames), "size": [40, 30], "durations_ms": durations}


HEVC_NAMES = ["hevc.mp4", "hevc_main.mp4", "hevc_open_gop.mov", "hevc_main10.mp4", "hevc_rotated.mp4"]


def parse_hvcc(hvcc: bytes) -> dict:
    """What an HEVC decoder configuration record (ISO/IEC 14496-15, 8.3.3.1) holds, read
    independently of the engine's parser: the NAL length size and each array's NAL type and count."""
    assert hvcc[0] == 1
    arrays, at = {}, 23
    for _ in range(hvcc[22]):
        nal_type, count = hvcc[at] & 0x3F, struct.unpack(">H", hvcc[at + 1 : at + 3])[0]
        at += 3
        for _ in range(count):
            at += 2 + struct.unpack(">H", hvcc[at : at + 2])[0]
        arrays[str(nal_type)] = count
    assert at == len(hvcc), "nothing after the arrays"
    return {"nal_length_size": (hvcc[21] & 3) + 1, "arrays": arrays,
            "chroma_format": hvcc[16] & 3, "bit_depth_luma": (hvcc[17] & 7) + 8}


def hevc_facts(path: Path) -> dict:
    """What FFmpeg reads from an HEVC file's headers (its SPS parser: the cropped size, bit depth
    and chroma format through the pixel format, the VUI's matrix and range) and packet table."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        cc = stream.codec_context
        hvcc = bytes(cc.extradata)
        packets = [p for p in container.demux(stream) if p.size]
        return {
            "codec_tag": stream.codec_tag,
            "size": [cc.width, cc.height],
            "pix_fmt": cc.pix_fmt,
            "color_range": int(cc.color_range),
            "matrix": int(cc.colorspace),
            "seconds": float(sum(p.duration for p in packets) * stream.time_base),
            "keyframes": [i for i, p in enumerate(packets) if p.is_keyframe],
            "hvcC": parse_hvcc(hvcc),
        }


def make_hevc() -> dict:
    """HEVC (libx265, 'hvc1', as iPhones write it) in MP4 and MOV: what macOS decodes through
    VideoToolbox and other systems describe and refuse."""
    x265 = "log-level=none:pools=none:frame-threads=1"
    gop = "keyint=10:min-keyint=10:scenecut=0:bframes=3"
    # Main, nothing signalled (BT.601 limited): 5 frames, x265's defaults.
    encode(OUT / "hevc.mp4", "libx265", 64, 48, 5, {"preset": "fast", "x265-params": x265}, codec_tag="hvc1")
    # Main, BT.709 limited (an iPhone's SDR clip); 96x54 is coded as 96x56 with a conformance
    # window; closed groups of pictures (an IDR every 10 frames), B-frames reordered.
    bt709 = "colorprim=bt709:transfer=bt709:colormatrix=bt709:range=limited"
    encode(OUT / "hevc_main.mp4", "libx265", 96, 54, 20,
           {"preset": "fast", "x265-params": f"{x265}:{gop}:open-gop=0:{bt709}"},
           codec_tag="hvc1", source_colour=("ITU709", "MPEG"))
    # QuickTime, BT.601 full range, open groups of pictures: frame 10 is a CRA picture whose
    # leading (RASL) frames reference the group before it.
    full = "colorprim=smpte170m:transfer=smpte170m:colormatrix=smpte170m:range=full"
    encode(OUT / "hevc_open_gop.mov", "libx265", 64, 48, 20,
           {"preset": "fast", "x265-params": f"{x265}:{gop}:open-gop=1:{full}"},
           container_format="mov", codec_tag="hvc1", source_colour=("SMPTE170M", "JPEG"))
    # Main 10, BT.2020 (non-constant luminance), limited: what VideoToolbox converts to 8 bits.
    bt2020 = "colorprim=bt2020:transfer=bt709:colormatrix=bt2020nc:range=limited"
    encode(OUT / "hevc_main10.mp4", "libx265", 64, 48, 10,
           {"preset": "fast", "x265-params": f"{x265}:{gop}:open-gop=0:{bt2020}"},
           codec_tag="hvc1", pix_fmt="yuv420p10le", source_colour=("BT2020", "MPEG"))
    rotated = bytearray((OUT / "hevc_main.mp4").read_bytes())
    patch_rotation(rotated)
    (OUT / "hevc_rotated.mp4").write_bytes(rotated)

    videos = {}
    for name, indices in [("hevc.mp4", [0, 1, 2, 3, 4]), ("hevc_main.mp4", REFERENCE_INDICES),
                          ("hevc_open_gop.mov", REFERENCE_INDICES), ("hevc_main10.mp4", [0, 5, 9])]:
        videos[name] = {**reference_frames(OUT / name, indices=indices), **hevc_facts(OUT / name)}
    # The same stream as hevc_main.mp4: its frames are those, turned.
    videos["hevc_rotated.mp4"] = {**reference_frames(OUT / "hevc_rotated.mp4", save=False),
                                  **hevc_facts(OUT / "hevc_rotated.mp4")}
    return videos


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    x264 = {"preset": "medium", "crf": "26", "threads": "1", "g": "10", "keyint_min": "10", "sc_threshold": "0"}
    meta = {"versions": {"av": av.__version__, "ffmpeg": av.ffmpeg_version_info, "pillow": PIL.__version__}}
    videos = {}

    baseline = OUT / "h264_baseline.mp4"
    encode(baseline, "libx264", 64, 48, 20, {**x264, "profile": "baseline", "bf": "0"},
           container_options={"movflags": "+faststart"})
    encode(OUT / "h264_high.mp4", "libx264", 96, 54, 20, {**x264, "profile": "high", "bf": "2"}, colorspace="bt709")
    encode(OUT / "h264_main.mov", "libx264", 64, 48, 20, {**x264, "profile": "main", "bf": "2"},
           container_format="mov", audio=True)
    # Long enough (6 groups of pictures) to be decoded in parallel pieces.
    encode(OUT / "h264_long.mp4", "libx264", 64, 48, 60, {**x264, "profile": "high", "bf": "2"})
    # As browsers' MediaRecorder and some screen recorders write it: frames listed in moof boxes.
    fragmented = OUT / "h264_fragmented.mp4"
    encode(fragmented, "libx264", 64, 48, 20, {**x264, "profile": "baseline", "bf": "0"},
           container_options={"movflags": "frag_keyframe+empty_moov+default_base_moof"})
    rotated = bytearray(baseline.read_bytes())
    patch_rotation(rotated)
    (OUT / "h264_rotated.mp4").write_bytes(rotated)
    for name in ["h264_baseline.mp4", "h264_high.mp4", "h264_main.mov"]:
        videos[name] = reference_frames(OUT / name)
    # The same stream as h264_baseline.mp4: its frames are those, turned.
    videos["h264_long.mp4"] = reference_frames(OUT / "h264_long.mp4", indices=[0, 25, 59])
    videos["h264_rotated.mp4"] = reference_frames(OUT / "h264_rotated.mp4", save=False)
    videos["h264_fragmented.mp4"] = reference_frames(fragmented, save=False)
    with av.open(str(baseline)) as a, av.open(str(fragmented)) as b:
        same = all(x.to_ndarray().tobytes() == y.to_ndarray().tobytes() for x, y in zip(a.decode(video=0), b.decode(video=0)))
    assert same, "the fragmented file holds the baseline file's stream"

    videos.update(make_hevc())

    long = OUT / "three_hours.mp4"
    encode(long, "libx264", 64, 48, 2, {**x264, "profile": "baseline", "bf": "0"})
    data = bytearray(long.read_bytes())
    patch_duration(data, 3 * 3600.0)
    long.write_bytes(data)

    make_wide(OUT / "wide.mp4", 16000, 2560)

    data = baseline.read_bytes()
    (mdat, mdat_end, _), = find(data, ["mdat"])
    (OUT / "truncated.mp4").write_bytes(data[: (mdat + mdat_end) // 2])

    meta["videos"] = videos
    meta["gif"] = make_gifs()
    meta["webp"] = make_webp()
    with open(OUT / "meta.json", "w") as f:
        json.dump(meta, f, indent=2)
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{len(list(OUT.iterdir()))} files, {total / 1e3:.0f} KB")
    for p in sorted(OUT.iterdir()):
        print(f"{p.stat().st_size:>8} {p.name}")


def main_hevc() -> None:
    """Only the HEVC clips and their entries in meta.json: the other files stay as committed
    (h264_high.mp4's BT.709 source frames come from swscale, whose SIMD differs between CPUs)."""
    for old in OUT.glob("hevc*"):
        old.unlink()
    with open(OUT / "meta.json") as f:
        meta = json.load(f)
    assert meta["versions"] == {"av": av.__version__, "ffmpeg": av.ffmpeg_version_info, "pillow": PIL.__version__}
    meta["videos"].update(make_hevc())
    with open(OUT / "meta.json", "w") as f:
        json.dump(meta, f, indent=2)
    for p in sorted(OUT.glob("hevc*")):
        print(f"{p.stat().st_size:>8} {p.name}")


if __name__ == "__main__":
    import sys

    main_hevc() if sys.argv[1:] == ["hevc"] else main()
