package main

import (
	"context"
	"io"
)

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return nil
}
