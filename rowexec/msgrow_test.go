package rowexec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

func TestAttrsJSON(t *testing.T) {
	require.Equal(t, "{}", attrsJSON(nil))
	require.Equal(t, `{"a": "1", "bb": "x\"y", "ccc": "\n"}`,
		attrsJSON([]topicstore.Attr{{Key: "ccc", Value: "\n"}, {Key: "a", Value: "1"}, {Key: "bb", Value: `x"y`}}))
}
