namespace Broker.Core.Internal.Protocol;

/// <summary>The limits the parser enforces before it buffers more input.</summary>
internal readonly record struct ParserLimits(int MaxControlLine, int MaxPayload);
