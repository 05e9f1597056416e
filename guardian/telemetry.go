package guardian

import (
	"context"
	"errors"

	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/ocsf"
	"github.com/wardenhq/warden/otelx"
)

// telemetry starts the trace exporters the config asks for — OTLP spans
// (otel:) and the OCSF file (trace.ocsf_file) — and returns obs with them
// added. With neither configured it returns obs as it is: nothing is
// started and the decision path is unchanged.
func (g *Guardian) telemetry(cfg *config.Config, obs pipeline.Observer) (pipeline.Observer, error) {
	var add pipeline.Observers
	if cfg.OTel.Enabled() {
		e, err := otelx.New(cfg.OTel, g.log)
		if err != nil {
			return nil, err
		}
		g.otel = e
		add = append(add, e)
	}
	if t := cfg.Trace; t.OCSFFile != "" {
		s, err := ocsf.NewSink(ocsf.SinkOptions{Path: string(t.OCSFFile), MaxSize: int64(t.OCSFMaxSize), MaxFiles: t.OCSFMaxFiles,
			Queue: t.OCSFQueue, OnError: func(err error) { g.log.Warn("writing OCSF events", "err", err) }})
		if err != nil {
			if g.otel != nil {
				_ = g.otel.Shutdown(context.Background())
			}
			return nil, err
		}
		g.ocsf = s
		add = append(add, s)
	}
	if len(add) == 0 {
		return obs, nil
	}
	if obs != nil {
		add = append(pipeline.Observers{obs}, add...)
	}
	return add, nil
}

// closeTelemetry flushes the exporters until ctx is done.
func (g *Guardian) closeTelemetry(ctx context.Context) error {
	var errs []error
	if g.otel != nil {
		errs = append(errs, g.otel.Shutdown(ctx))
	}
	if g.ocsf != nil {
		errs = append(errs, g.ocsf.Close(ctx))
	}
	return errors.Join(errs...)
}

// OTel returns the span exporter (otel:), nil when otel is off: the server
// wraps the decision surfaces in its Middleware and counts its drops.
func (g *Guardian) OTel() *otelx.Exporter { return g.otel }

// OCSF returns the OCSF file sink (trace.ocsf_file), nil without one.
func (g *Guardian) OCSF() *ocsf.Sink { return g.ocsf }
