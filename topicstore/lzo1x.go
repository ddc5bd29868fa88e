package topicstore

import "encoding/binary"

// An LZO1X-1 compressor: a port of lzo1x_1_compress (the classic,
// non-RLE variant found in minilzo and in Linux's lib/lzo/lzo1x_compress.c).
// Its output is a standard LZO1X stream that any LZO1X decompressor, such as
// github.com/anchore/go-lzo, decodes.
//
// The stream is made of instructions:
//   - literal runs (first byte 17+t, or 0..15 + optional 0-bytes + length),
//   - M2 matches: length 3..8, distance <= 2 KiB (2 bytes),
//   - M3 matches: any length, distance <= 16 KiB (3+ bytes),
//   - M4 matches: any length, distance <= 48 KiB (3+ bytes),
//   - the end marker 0x11 0x00 0x00 (an M4 with distance 16384).
//
// Up to 3 literals following a match are stored in the low 2 bits of the
// match's last distance byte.

const (
	lzoM2MaxLen    = 8
	lzoM2MaxOffset = 0x0800
	lzoM3MaxOffset = 0x4000
	lzoM3MaxLen    = 33
	lzoM4MaxLen    = 9
	lzoM4MaxOffset = 0xbfff
	lzoM3Marker    = 32
	lzoM4Marker    = 16
	lzoDBits       = 13
	lzoDSize       = 1 << lzoDBits
	lzoDMask       = lzoDSize - 1
)

// lzo1xBound is the worst-case compressed size of n bytes.
func lzo1xBound(n int) int { return n + n/16 + 64 + 3 }

// lzo1xCompress appends the LZO1X-1 compressed form of in to out.
func lzo1xCompress(out, in []byte) []byte {
	var dict [lzoDSize]uint16
	base := len(out) // where the stream starts in out
	pos := 0         // start of the current block in in
	l := len(in)
	t := 0 // pending literals carried between blocks
	for l > 20 {
		ll := l
		if ll > lzoM4MaxOffset+1 {
			ll = lzoM4MaxOffset + 1
		}
		clear(dict[:])
		out, t = lzo1xBlock(out, in, pos, pos+ll, t, &dict)
		pos += ll
		l -= ll
	}
	t += l
	if t > 0 {
		ii := len(in) - t
		if len(out) == base && t <= 238 {
			out = append(out, byte(17+t))
		} else {
			out = lzoLiteralHeader(out, t)
		}
		out = append(out, in[ii:]...)
	}
	return append(out, lzoM4Marker|1, 0, 0)
}

// lzoLiteralHeader appends the header of a literal run of t bytes that does
// not start the stream.
func lzoLiteralHeader(out []byte, t int) []byte {
	switch {
	case t <= 3:
		// Stored in the state bits of the previous match's distance.
		out[len(out)-2] |= byte(t)
	case t <= 18:
		out = append(out, byte(t-3))
	default:
		tt := t - 18
		out = append(out, 0)
		for tt > 255 {
			tt -= 255
			out = append(out, 0)
		}
		out = append(out, byte(tt))
	}
	return out
}

// lzo1xBlock compresses in[start:end] (at most 48 KiB), with ti literals
// pending from the previous block, and returns the literals left pending.
func lzo1xBlock(out, in []byte, start, end, ti int, dict *[lzoDSize]uint16) ([]byte, int) {
	ipEnd := end - 20
	ii := start
	ip := start
	if ti < 4 {
		ip += 4 - ti
	}
	for {
		// literal: skip ahead faster the longer we go without a match.
		ip += 1 + ((ip - ii) >> 5)
	next:
		if ip >= ipEnd {
			break
		}
		dv := binary.LittleEndian.Uint32(in[ip:])
		h := ((dv * 0x1824429d) >> (32 - lzoDBits)) & lzoDMask
		mPos := start + int(dict[h])
		dict[h] = uint16(ip - start)
		if dv != binary.LittleEndian.Uint32(in[mPos:]) {
			continue
		}

		ii -= ti
		ti = 0
		if t := ip - ii; t != 0 {
			out = lzoLiteralHeader(out, t)
			out = append(out, in[ii:ip]...)
		}

		mLen := 4
		for ip+mLen < ipEnd && in[ip+mLen] == in[mPos+mLen] {
			mLen++
		}

		mOff := ip - mPos
		ip += mLen
		ii = ip
		switch {
		case mLen <= lzoM2MaxLen && mOff <= lzoM2MaxOffset:
			mOff--
			out = append(out, byte(((mLen-1)<<5)|((mOff&7)<<2)), byte(mOff>>3))
		case mOff <= lzoM3MaxOffset:
			mOff--
			if mLen <= lzoM3MaxLen {
				out = append(out, byte(lzoM3Marker|(mLen-2)))
			} else {
				mLen -= lzoM3MaxLen
				out = append(out, lzoM3Marker) // its length bits 0: the length follows
				for mLen > 255 {
					mLen -= 255
					out = append(out, 0)
				}
				out = append(out, byte(mLen))
			}
			out = append(out, byte(mOff<<2), byte(mOff>>6))
		default:
			mOff -= 0x4000
			if mLen <= lzoM4MaxLen {
				out = append(out, byte(lzoM4Marker|((mOff>>11)&8)|(mLen-2)))
			} else {
				mLen -= lzoM4MaxLen
				out = append(out, byte(lzoM4Marker|((mOff>>11)&8)))
				for mLen > 255 {
					mLen -= 255
					out = append(out, 0)
				}
				out = append(out, byte(mLen))
			}
			out = append(out, byte(mOff<<2), byte(mOff>>6))
		}
		goto next
	}
	return out, end - (ii - ti)
}
