// ffmpeg and ffprobe (Debian's ffmpeg package) on local files only. Everything they read was
// downloaded first through the guarded HTTP engine: each input is opened with the `file`
// protocol alone (no network, no pipes) and a fixed list of container demuxers, so a crafted file
// cannot make them open a playlist, a concat list or a URL of its own. What they write is capped
// (-fs) at the media size cap: re-encoding can make a file far larger than its source (two minutes
// of FLAC silence are 25 kB; their MP3 almost 500 kB). At most `maxProcesses` of them run at
// once per instance (one per process: the Scraper's); the others wait within their deadline.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { TeamConcurrency } from '../team-concurrency.ts';
import { FfmpegUnavailableError } from '../../errors.ts';

export interface FfmpegOptions {
  ffmpegPath: string;
  ffprobePath: string;
  /** FFMPEG_MAX_PROCESSES: ffmpeg and ffprobe processes running at once. */
  maxProcesses: number;
  /** MEDIA_MAX_BYTES: the largest file ffmpeg may write. */
  maxBytes: number;
}

/** Demuxers an input may be read with: media containers, never playlists or concat lists. */
const DEMUXERS = 'mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,mpegts,mp3,aac,ogg,wav,flac,flv,avi,asf,mpeg,aiff';
const INPUT_GUARD = ['-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS];

export interface ProbeStream {
  type: string;
  codec: string;
}

export interface Probe {
  /** ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2". */
  format: string;
  /** Seconds; undefined when the container does not say. */
  duration?: number;
  streams: ProbeStream[];
  /** The MP4 major brand ("qt  " for QuickTime), when there is one. */
  brand?: string;
}

/** ffmpeg failed on an input (the message ends with its last error lines). */
export class FfmpegFailed extends Error {}

/** ffmpeg's output reached FfmpegOptions.maxBytes, where it was cut off (the caller names the media). */
export class FfmpegOutputTooLarge extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`ffmpeg's output reached ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

export class Ffmpeg {
  readonly #o: FfmpegOptions;
  // One queue (the key is fixed): a process starts when fewer than maxProcesses run.
  readonly #slots = new TeamConcurrency();

  constructor(options: FfmpegOptions) {
    this.#o = options;
  }

  async probe(path: string, signal: AbortSignal): Promise<Probe> {
    const out = await this.#run(
      'ffprobe',
      ['-v', 'error', ...INPUT_GUARD, '-print_format', 'json', '-show_format', '-show_streams', `file:${path}`],
      signal,
    );
    const json = JSON.parse(out) as {
      format?: { format_name?: string; duration?: string; tags?: Record<string, string> };
      streams?: { codec_type?: string; codec_name?: string }[];
    };
    const duration = Number(json.format?.duration);
    return {
      format: json.format?.format_name ?? '',
      ...(Number.isFinite(duration) && duration > 0 ? { duration } : {}),
      streams: (json.streams ?? []).map((s) => ({ type: s.codec_type ?? '', codec: s.codec_name ?? '' })),
      ...(json.format?.tags?.major_brand ? { brand: json.format.tags.major_brand } : {}),
    };
  }

  /** Copies the video and audio streams of the inputs (without re-encoding) into an MP4. */
  async remuxToMp4(
    inputs: { path: string; streams: 'all' | 'video' | 'audio' }[],
    out: string,
    signal: AbortSignal,
  ): Promise<void> {
    const maps = inputs.flatMap((input, i) => [
      ...(input.streams !== 'audio' ? ['-map', `${i}:v?`] : []),
      ...(input.streams !== 'video' ? ['-map', `${i}:a?`] : []),
    ]);
    await this.#ffmpeg(
      [
        ...inputs.flatMap((i) => [...INPUT_GUARD, '-i', `file:${i.path}`]),
        ...maps,
        '-c',
        'copy',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
      out,
      signal,
    );
  }

  /** The first audio stream of the input, encoded as MP3 (LAME VBR quality 4, about 165 kbit/s). */
  async extractMp3(input: string, out: string, signal: AbortSignal): Promise<void> {
    await this.#ffmpeg(
      [...INPUT_GUARD, '-i', `file:${input}`, '-map', '0:a:0', '-vn', '-c:a', 'libmp3lame', '-q:a', '4', '-f', 'mp3'],
      out,
      signal,
    );
  }

  // Writes `out`; -fs stops ffmpeg (successfully, with a truncated file) once it reaches maxBytes.
  async #ffmpeg(args: string[], out: string, signal: AbortSignal): Promise<void> {
    const max = this.#o.maxBytes;
    await this.#run(
      'ffmpeg',
      ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args, '-fs', String(max), `file:${out}`],
      signal,
    );
    if ((await stat(out)).size >= max) throw new FfmpegOutputTooLarge(max);
  }

  async #run(program: 'ffmpeg' | 'ffprobe', args: string[], signal: AbortSignal): Promise<string> {
    const slot = await this.#slots.acquire('ffmpeg', this.#o.maxProcesses, signal);
    try {
      signal.throwIfAborted();
      return await this.#spawn(program, args, signal);
    } finally {
      slot.release();
    }
  }

  #spawn(program: 'ffmpeg' | 'ffprobe', args: string[], signal: AbortSignal): Promise<string> {
    const path = program === 'ffmpeg' ? this.#o.ffmpegPath : this.#o.ffprobePath;
    return new Promise((resolve, reject) => {
      const child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (c: Buffer) => out.push(c));
      // The last few lines are the reason; the rest is not kept.
      child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-2000)));
      child.on('error', (e: NodeJS.ErrnoException) => {
        // Aborted: the process was sent SIGKILL; 'close' follows once it is gone (and its slot free).
        if (e.name === 'AbortError') return;
        if (e.code === 'ENOENT' || e.code === 'EACCES') reject(new FfmpegUnavailableError(program, path));
        else reject(e);
      });
      child.on('close', (code) => {
        if (signal.aborted) return reject(signal.reason);
        if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
        else
          reject(new FfmpegFailed(err.trim().split('\n').slice(-3).join(' ') || `${program} exited with code ${code}`));
      });
    });
  }
}

/** The MIME type and file extension of a probed file. */
export function mediaType(p: Probe): { mimeType: string; ext: string } {
  const video = p.streams.some((s) => s.type === 'video');
  const codecs = p.streams.map((s) => s.codec);
  const f = p.format.split(',');
  if (f.includes('mp4') || f.includes('mov')) {
    if (p.brand?.trim() === 'qt') return { mimeType: 'video/quicktime', ext: 'mov' };
    return video ? { mimeType: 'video/mp4', ext: 'mp4' } : { mimeType: 'audio/mp4', ext: 'm4a' };
  }
  if (f.includes('matroska') || f.includes('webm')) {
    const webm = codecs.every((c) => ['vp8', 'vp9', 'av1', 'opus', 'vorbis'].includes(c));
    if (webm) return video ? { mimeType: 'video/webm', ext: 'webm' } : { mimeType: 'audio/webm', ext: 'webm' };
    return { mimeType: 'video/x-matroska', ext: 'mkv' };
  }
  const byFormat: Record<string, { mimeType: string; ext: string }> = {
    mpegts: { mimeType: 'video/mp2t', ext: 'ts' },
    mp3: { mimeType: 'audio/mpeg', ext: 'mp3' },
    aac: { mimeType: 'audio/aac', ext: 'aac' },
    ogg: video ? { mimeType: 'video/ogg', ext: 'ogv' } : { mimeType: 'audio/ogg', ext: 'ogg' },
    wav: { mimeType: 'audio/wav', ext: 'wav' },
    flac: { mimeType: 'audio/flac', ext: 'flac' },
    flv: { mimeType: 'video/x-flv', ext: 'flv' },
    avi: { mimeType: 'video/x-msvideo', ext: 'avi' },
    asf: { mimeType: 'video/x-ms-asf', ext: 'asf' },
    mpeg: { mimeType: 'video/mpeg', ext: 'mpg' },
    aiff: { mimeType: 'audio/aiff', ext: 'aiff' },
  };
  return byFormat[f[0]] ?? { mimeType: 'application/octet-stream', ext: 'bin' };
}

/** Whether `command` (a path, or a name looked up on PATH) is an executable file. */
export function isExecutable(command: string): boolean {
  const dirs = command.includes('/') ? [''] : (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.some((dir) => {
    try {
      accessSync(dir ? join(dir, command) : command, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
