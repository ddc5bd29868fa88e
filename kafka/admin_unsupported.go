package kafka

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// unsupportedAnswer is the answer to a request of an API kmsg knows, at
// a version kmsg can encode, that is outside Supported: the API's
// response at the request's version with every ErrorCode field
// UNSUPPORTED_VERSION (35). The request's body is not read, so the
// response's lists are empty and only its top-level error code (where
// the version has one) carries the error. Nil means no answer can be
// encoded (an API kmsg does not know, or a version past kmsg's): the
// connection closes.
func unsupportedAnswer(key, version int16) kmsg.Response {
	req := kmsg.RequestForKey(key)
	if req == nil || version < 0 || version > req.MaxVersion() {
		return nil
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	setErrorCodes(reflect.ValueOf(resp), kerr.UnsupportedVersion.Code)
	return resp
}

// setErrorCodes sets every int16 field named ErrorCode reachable from v
// (through pointers, structs and slices) to code.
func setErrorCodes(v reflect.Value, code int16) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setErrorCodes(v.Elem(), code)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			setErrorCodes(v.Index(i), code)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := v.Field(i)
			if t.Field(i).Name == "ErrorCode" && f.Kind() == reflect.Int16 && f.CanSet() {
				f.SetInt(int64(code))
				continue
			}
			if t.Field(i).IsExported() {
				setErrorCodes(f, code)
			}
		}
	}
}
