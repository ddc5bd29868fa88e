package eval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLike(t *testing.T) {
	m, err := match("~~", "hello", "h%l_o")
	require.NoError(t, err)
	require.Equal(t, true, m)
	m, err = match("!~~*", "HELLO", "h%")
	require.NoError(t, err)
	require.Equal(t, false, m)
}
