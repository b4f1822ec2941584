using Broker.Abstractions;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>
/// One connection's side of the authorization callout: the answer its read loop awaits after CONNECT (the rest of its
/// input waits with it, with no thread held), whether the service authorized it, and the timer that closes it when its
/// user JWT expires or its connect window ends (nats-server <c>setExpiration</c>). Created only for connections whose
/// CONNECT went to the callout; the read loop of every other connection pays one null check.
/// </summary>
internal sealed class CalloutSession : IDisposable
{
    private Task<CalloutResult>? pending;
    private Timer? expiry;
    private volatile bool authorized;

    /// <summary>
    /// Whether the service authorized the connection (its user and permissions came from the user JWT); set by the read
    /// loop, read by a reload's thread.
    /// </summary>
    public bool Authorized => authorized;

    /// <summary>
    /// Sends the request for a connection's CONNECT (its synchronous part runs here: sign, seal, publish) and keeps the
    /// answer for <see cref="TakePending"/>.
    /// </summary>
    public void Start(AuthCallout callout, CalloutScope scope, Events.ClientInfo client, ConnectMessage connect, string? nonce, ITlsConnectionFeature? tls, TimeSpan timeout) =>
        pending = callout.AuthorizeAsync(scope, new CalloutCandidate(client, connect, nonce, tls), timeout, CancellationToken.None);

    /// <summary>The answer awaited, once (null when no request is out): read by the connection's read loop only.</summary>
    public Task<CalloutResult>? TakePending()
    {
        var taken = pending;
        pending = null;
        return taken;
    }

    /// <summary>Marks the connection authorized and starts its expiry, if the user JWT sets one.</summary>
    public void Authorize(TimeSpan? expiresIn, Action expired)
    {
        authorized = true;
        if (expiresIn is { } after)
        {
            expiry = new Timer(static state => ((Action)state!).Invoke(), expired, after, Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>Stops the expiry for good (the connection ended).</summary>
    public void Dispose() => Interlocked.Exchange(ref expiry, null)?.Dispose();
}
