namespace Broker.Core.Internal.Protocol;

/// <summary>The operations a client may send.</summary>
internal enum ClientOp : byte
{
    Pub,
    HPub,
    Sub,
    Unsub,
    Ping,
    Pong,
    Connect,
    Info,
    Ok,
    Err,
}

/// <summary>One parsed control line: the operation and its arguments as spans into the line.</summary>
internal ref struct ControlLine
{
    public ClientOp Op;

    /// <summary>PUB/HPUB/SUB subject; UNSUB sid; CONNECT/INFO/-ERR whole argument.</summary>
    public ReadOnlySpan<byte> First;

    /// <summary>PUB/HPUB reply subject or SUB queue group; empty when absent.</summary>
    public ReadOnlySpan<byte> Second;

    /// <summary>SUB sid.</summary>
    public ReadOnlySpan<byte> Sid;

    /// <summary>HPUB header size.</summary>
    public int HeaderSize;

    /// <summary>PUB/HPUB total payload size; UNSUB max (-1 when absent).</summary>
    public long Size;

    public readonly bool HasPayload => Op is ClientOp.Pub or ClientOp.HPub;
}
