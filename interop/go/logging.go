package main

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	a2alog "trpc.group/trpc-go/trpc-a2a-go/log"
	"trpc.group/trpc-go/trpc-agent-go/log"
)

// init sends trpc-agent-go's and trpc-a2a-go's loggers (stdout by default)
// to stderr, so stdout carries only READY lines and JSON event lines.
func init() {
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.RFC3339TimeEncoder
	lvl := zapcore.WarnLevel
	if os.Getenv("GOPEER_DEBUG") != "" {
		lvl = zapcore.DebugLevel
	}
	l := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.Lock(os.Stderr), lvl),
		zap.AddCaller(), zap.AddCallerSkip(1)).Sugar()
	log.Default = l
	log.ContextDefault = l
	a2alog.Default = l
}
