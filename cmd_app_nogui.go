//go:build nogui

package main

import (
	"context"
	"errors"
	"io"
)

func cmdApp(context.Context, []string, io.Writer, io.Writer) error {
	return errors.New("this build has no desktop app (built with -tags nogui); try 'ember help'")
}
