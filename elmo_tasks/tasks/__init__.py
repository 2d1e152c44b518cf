"""One subpackage per benchmark, each with its reader, model, metric and predictor together."""
