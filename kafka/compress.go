package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's compression codecs (a record batch's attributes, bits 0-2).
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

// maxDecompressed bounds what one record batch may decompress to: twelve
// maximal messages' worth. A batch past it is MESSAGE_TOO_LARGE, found
// without decompressing more than that.
const maxDecompressed = 12 * (12 << 20)

// errTooLarge: a batch decompresses to more than maxDecompressed.
var errTooLarge = refuse(kerr.MessageTooLarge, "the record batch decompresses to more than %d bytes", maxDecompressed)

// zstdDecoder is shared: DecodeAll is safe for concurrent use.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecompressed))
})

// decompress returns the records of a batch compressed with codec; the
// result never aliases src except for codecNone.
func decompress(codec int, src []byte) ([]byte, error) {
	switch codec {
	case codecNone:
		return src, nil
	case codecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return readLimited(zr)
	case codecSnappy:
		return unsnappy(src)
	case codecLZ4:
		return readLimited(lz4.NewReader(bytes.NewReader(src)))
	case codecZstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(out) > maxDecompressed {
			return nil, errTooLarge
		}
		return out, err
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// readLimited reads r to its end, at most maxDecompressed bytes.
func readLimited(r io.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressed+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxDecompressed {
		return nil, errTooLarge
	}
	return out, nil
}

// xerialMagic starts snappy data in the xerial framing the Java client
// (and librdkafka) writes: magic, then version and compatible version
// (4 bytes each), then blocks of a 4-byte big-endian length and a raw
// snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes Kafka's snappy: xerial-framed or one raw block.
func unsnappy(src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return unsnappyBlock(nil, src)
	}
	if len(src) < 16 {
		return nil, errors.New("snappy: truncated xerial header")
	}
	var out []byte
	for rest := src[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("snappy: truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, errors.New("snappy: truncated xerial block")
		}
		var err error
		if out, err = unsnappyBlock(out, rest[:n]); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// unsnappyBlock appends the decoding of one raw snappy block to out,
// refusing one that would take out past maxDecompressed before decoding.
func unsnappyBlock(out, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if len(out)+n > maxDecompressed {
		return nil, errTooLarge
	}
	dec, err := s2.Decode(nil, block)
	if err != nil {
		return nil, err
	}
	return append(out, dec...), nil
}
