package topicstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"

	lzo "github.com/anchore/go-lzo"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// String returns the codec's name as the dialect spells it.
func (c Codec) String() string {
	switch c {
	case CodecRaw:
		return "raw"
	case CodecGzip:
		return "gzip"
	case CodecLzop:
		return "lzop"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// ParseCodec parses a codec name ("raw", "gzip", "lzop", "zstd"), case
// insensitively.
func ParseCodec(s string) (Codec, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "raw":
		return CodecRaw, nil
	case "gzip":
		return CodecGzip, nil
	case "lzop":
		return CodecLzop, nil
	case "zstd":
		return CodecZstd, nil
	}
	return 0, fmt.Errorf("unknown codec %q", s)
}

// Valid reports whether c is one of the known codecs.
func (c Codec) Valid() bool { return c >= CodecRaw && c <= CodecZstd }

var (
	zstdEnc, _ = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(2),
		zstd.WithWindowSize(1<<20))
	zstdDec, _ = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(2),
		zstd.WithDecoderMaxMemory(2*MaxMessageSize))
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders sync.Pool
)

// Compress compresses data with codec c. CodecRaw returns data itself.
//
// The lzop body is uvarint(len(data)) followed by an LZO1X-1 stream, so
// Decompress can size its output buffer.
func Compress(c Codec, data []byte) ([]byte, error) {
	switch c {
	case CodecRaw:
		return data, nil
	case CodecGzip:
		var buf bytes.Buffer
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		w.Reset(&buf)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case CodecLzop:
		out := make([]byte, 0, binary.MaxVarintLen64+lzo1xBound(len(data)))
		out = binary.AppendUvarint(out, uint64(len(data)))
		return lzo1xCompress(out, data), nil
	case CodecZstd:
		return zstdEnc.EncodeAll(data, make([]byte, 0, len(data)/2+64)), nil
	}
	return nil, fmt.Errorf("%w: unknown codec %d", ErrCodecNotSupported, uint8(c))
}

// Decompress returns the uncompressed data of a body stored with codec c.
// CodecRaw returns body itself.
func Decompress(c Codec, body []byte) ([]byte, error) {
	switch c {
	case CodecRaw:
		return body, nil
	case CodecGzip:
		var r *gzip.Reader
		if v := gzipReaders.Get(); v != nil {
			r = v.(*gzip.Reader)
			if err := r.Reset(bytes.NewReader(body)); err != nil {
				return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			}
		} else {
			var err error
			if r, err = gzip.NewReader(bytes.NewReader(body)); err != nil {
				return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			}
		}
		defer gzipReaders.Put(r)
		out, err := io.ReadAll(io.LimitReader(r, MaxMessageSize+1))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		if len(out) > MaxMessageSize {
			return nil, fmt.Errorf("%w: gzip body exceeds %d bytes", ErrCorrupt, MaxMessageSize)
		}
		return out, nil
	case CodecLzop:
		n, k := binary.Uvarint(body)
		if k <= 0 || n > MaxMessageSize {
			return nil, fmt.Errorf("%w: lzop length prefix", ErrCorrupt)
		}
		out := make([]byte, n)
		got, err := lzo.Decompress(body[k:], out)
		if err != nil {
			return nil, fmt.Errorf("%w: lzop: %v", ErrCorrupt, err)
		}
		if uint64(got) != n {
			return nil, fmt.Errorf("%w: lzop: got %d bytes, want %d", ErrCorrupt, got, n)
		}
		return out, nil
	case CodecZstd:
		out, err := zstdDec.DecodeAll(body, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, uint8(c))
}
