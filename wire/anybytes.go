package wire

import "unsafe"

// anyBytes returns *p as an interface value without copying the slice
// header to the heap, as converting a []byte to any does: the value's data
// word points at *p itself, which must not change while the value lives.
// A 100-row INSERT binds 100 message bodies; Bind keeps their headers in
// one array and makes each parameter with anyBytes, one allocation for
// all instead of one each.
//
// It relies on the layout of an empty interface (a type word, then a data
// word pointing at the value), which the runtime and reflect share and
// which TestAnyBytes checks.
func anyBytes(p *[]byte) any {
	v := any([]byte(nil)) // the type word of []byte; a nil slice is not allocated
	(*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] = unsafe.Pointer(p)
	return v
}
