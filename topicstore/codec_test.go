package topicstore

import (
	"bytes"
	"math/rand"
	"testing"

	lzo "github.com/anchore/go-lzo"
	"github.com/stretchr/testify/require"
)

func lzoInputs() map[string][]byte {
	r := rand.New(rand.NewSource(1))
	random := func(n int) []byte { b := make([]byte, n); r.Read(b); return b }
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 30000)
	mixed := make([]byte, 0, 1<<20)
	for len(mixed) < 1<<20 {
		if r.Intn(2) == 0 {
			mixed = append(mixed, random(r.Intn(100))...)
		} else {
			off := r.Intn(len(mixed) + 1)
			n := r.Intn(300)
			if off+n > len(mixed) {
				n = len(mixed) - off
			}
			mixed = append(mixed, mixed[off:off+n]...)
		}
	}
	far := append(random(40000), random(5)...)
	far = append(far, far[:40000]...) // matches at M4 distance
	return map[string][]byte{
		"empty": {}, "one": {7}, "three": []byte("abc"), "twenty": []byte("01234567890123456789"),
		"21": []byte("aaaaaaaaaaaaaaaaaaaaa"), "tiny-repeat": bytes.Repeat([]byte("ab"), 40),
		"zeros-1MiB": make([]byte, 1<<20), "random-1MiB": random(1 << 20), "random-100": random(100),
		"text": text, "mixed-1MiB": mixed, "far": far, "random-49153": random(49153),
	}
}

func lzoRoundTrip(t testing.TB, in []byte) []byte {
	comp := lzo1xCompress(nil, in)
	out := make([]byte, len(in))
	n, err := lzo.Decompress(comp, out)
	if err != nil || n != len(in) || !bytes.Equal(out, in) {
		t.Fatalf("lzo round trip of %d bytes: n=%d err=%v equal=%v", len(in), n, err, bytes.Equal(out[:n], in))
	}
	return comp
}

func TestLZORoundTrip(t *testing.T) {
	for name, in := range lzoInputs() {
		t.Run(name, func(t *testing.T) {
			comp := lzoRoundTrip(t, in)
			require.LessOrEqual(t, len(comp), lzo1xBound(len(in)), "bound")
			switch name {
			case "zeros-1MiB", "text":
				require.Less(t, len(comp), len(in)/20, "repetitive input must compress")
			}
			t.Logf("%s: %d -> %d", name, len(in), len(comp))
		})
	}
}

func FuzzLZORoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("hello hello hello hello hello hello"))
	f.Add(bytes.Repeat([]byte{0, 1, 2}, 1000))
	f.Fuzz(func(t *testing.T, in []byte) { lzoRoundTrip(t, in) })
}

func TestCodecs(t *testing.T) {
	for _, c := range AllCodecs {
		p, err := ParseCodec(c.String())
		require.NoError(t, err)
		require.Equal(t, c, p)
		for name, in := range lzoInputs() {
			comp, err := Compress(c, in)
			require.NoError(t, err, name)
			out, err := Decompress(c, comp)
			require.NoError(t, err, name)
			require.True(t, bytes.Equal(in, out), "%s %s", c, name)
		}
	}
	_, err := ParseCodec("snappy")
	require.Error(t, err)
	_, err = Decompress(CodecZstd, []byte("garbage"))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = Decompress(CodecLzop, []byte{3, 1, 2})
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = Decompress(CodecGzip, []byte("garbage"))
	require.ErrorIs(t, err, ErrCorrupt)
}
