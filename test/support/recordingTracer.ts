import { Effect, Layer, Option, Tracer } from "effect"

/** A tracer that keeps every span it starts (Effect's built-in spans, recorded), and the layer installing it. */
export const recordingTracer = () => {
  const builtIn = Effect.runSync(Effect.tracer)
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = builtIn.span(...args)
      spans.push(span)
      return span
    },
    context: builtIn.context
  })
  return { spans, layer: Layer.setTracer(tracer) }
}

export const parentName = (span: Tracer.Span): string | undefined =>
  Option.match(span.parent, { onNone: () => undefined, onSome: (parent) => (parent._tag === "Span" ? parent.name : "external") })
