package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// minFrame is the smallest request frame: api key, api version and
// correlation id (request header v0).
const minFrame = 8

// errFrameSize: a frame's size is below a request header or above the
// limit. The connection closes; the frame is not read.
var errFrameSize = errors.New("kafka: request frame size out of bounds")

// readFrame reads one request frame from r: its 4-byte big-endian size,
// then that many bytes into buf (grown as needed, returned). A size
// below minFrame or above max is errFrameSize, and nothing more is read.
func readFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return buf, err
	}
	n := int64(int32(binary.BigEndian.Uint32(size[:])))
	if n < minFrame || n > int64(max) {
		return buf, fmt.Errorf("%w: %d bytes (limit %d)", errFrameSize, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, err
	}
	return buf, nil
}

// header is a request's header (v1, or v2 for flexible versions).
type header struct {
	key, version int16
	corr         int32
	clientID     string
}

// unsupportedError: the request names an API key or version this door
// does not implement (Supported).
type unsupportedError struct{ key, version int16 }

func (e *unsupportedError) Error() string {
	name := kmsg.NameForKey(e.key)
	if kmsg.RequestForKey(e.key) == nil {
		return fmt.Sprintf("unknown API key %d (version %d)", e.key, e.version)
	}
	return fmt.Sprintf("%s (key %d) version %d is not supported", name, e.key, e.version)
}

// decodeRequest decodes frame (without its size) into its header and
// request. An API or version outside Supported is *unsupportedError with
// the header decoded; a header or body that does not decode is an error
// too. The request may alias frame.
func decodeRequest(frame []byte) (header, kmsg.Request, error) {
	r := kbin.Reader{Src: frame}
	h := header{key: r.Int16(), version: r.Int16(), corr: r.Int32()}
	cid := r.NullableString()
	if !r.Ok() {
		return h, nil, errors.New("kafka: truncated request header")
	}
	if cid != nil {
		h.clientID = *cid
	}
	if !supported(h.key, h.version) {
		return h, nil, &unsupportedError{h.key, h.version}
	}
	req := kmsg.RequestForKey(h.key)
	if req == nil {
		return h, nil, &unsupportedError{h.key, h.version}
	}
	req.SetVersion(h.version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return h, nil, errors.New("kafka: truncated request header tags")
		}
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return h, nil, fmt.Errorf("kafka: %s v%d does not decode: %w", kmsg.NameForKey(h.key), h.version, err)
	}
	return h, req, nil
}

// appendResponse appends resp framed for the request with correlation id
// corr: size, response header (v0 for ApiVersions whatever its version,
// v1 with empty tagged fields for other flexible versions), body.
func appendResponse(dst []byte, corr int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
