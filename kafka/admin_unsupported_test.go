package kafka

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestUnsupportedAnswer: for every API key and version kmsg knows, the
// error answer encodes and decodes back, with UNSUPPORTED_VERSION in its
// top-level error code where the version has one; a key kmsg does not
// know, or a version past kmsg's, has no answer.
func TestUnsupportedAnswer(t *testing.T) {
	withCode := 0
	for key := int16(0); key < 200; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			if unsupportedAnswer(key, 0) != nil {
				t.Fatalf("key %d: kmsg does not know it, yet it has an answer", key)
			}
			continue
		}
		if unsupportedAnswer(key, req.MaxVersion()+1) != nil || unsupportedAnswer(key, -1) != nil {
			t.Fatalf("%s: an answer past kmsg's versions", kmsg.NameForKey(key))
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			resp := unsupportedAnswer(key, v)
			if resp == nil || resp.Key() != key || resp.GetVersion() != v {
				t.Fatalf("%s v%d: answer %v", kmsg.NameForKey(key), v, resp)
			}
			back := kmsg.ResponseForKey(key)
			back.SetVersion(v)
			if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
				t.Fatalf("%s v%d: the answer does not decode: %v", kmsg.NameForKey(key), v, err)
			}
			f := reflect.ValueOf(back).Elem().FieldByName("ErrorCode")
			if !f.IsValid() {
				continue
			}
			// Whether v encodes the field: a response with it set encodes
			// differently from one without.
			probe := kmsg.ResponseForKey(key)
			probe.SetVersion(v)
			plain := probe.AppendTo(nil)
			reflect.ValueOf(probe).Elem().FieldByName("ErrorCode").SetInt(1)
			if bytes.Equal(plain, probe.AppendTo(nil)) {
				continue
			}
			withCode++
			if f.Int() != int64(kerr.UnsupportedVersion.Code) {
				t.Fatalf("%s v%d: error code %d, want UNSUPPORTED_VERSION", kmsg.NameForKey(key), v, f.Int())
			}
		}
	}
	if withCode == 0 {
		t.Fatal("no response with a top-level error code was checked")
	}
}
