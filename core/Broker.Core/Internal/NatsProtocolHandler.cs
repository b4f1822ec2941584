using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>The in-box NATS client protocol, served through the same contract a plugin protocol uses.</summary>
internal sealed class NatsProtocolHandler(BrokerCore core) : IProtocolHandler
{
    public const string ProtocolName = "nats";

    // The stop tokens already watched (one per listener start).
    private readonly System.Collections.Concurrent.ConcurrentDictionary<CancellationToken, bool> watched = new();

    public string Protocol => ProtocolName;

    public Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        WakeReadsWhenCancelled(cancellationToken);
        return new NatsClient(core, connection).RunAsync(cancellationToken);
    }

    // Client reads wait without the stop token (ClientReadLoop): one registration per token wakes them all. A client
    // admitted after it fired sees the token before its first read.
    private void WakeReadsWhenCancelled(CancellationToken token)
    {
        if (!token.CanBeCanceled)
        {
            return;
        }

        if (watched.TryAdd(token, true))
        {
            token.UnsafeRegister(static state => ((NatsProtocolHandler)state!).WakeReads(), this);
        }
    }

    private void WakeReads()
    {
        foreach (var client in core.Clients.Values)
        {
            (client as NatsClient)?.CancelPendingRead();
        }
    }
}
