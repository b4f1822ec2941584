using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// What every part of one MQTT connection needs to know about it: the name its log events carry, and whether it is
/// closing and why. The first reason given is the one logged, except where a packet states the reason outright (a
/// refused CONNECT, the client's DISCONNECT). Closing from outside the read loop wakes the loop's pending read, and
/// the loop then tears the connection down. <see cref="MqttConnection"/> derives from it: the status is its base part
/// rather than an object of its own, as both live and die together (48 B less per connection, issue 25).
/// </summary>
internal class ConnectionStatus
{
    private protected readonly TransportConnection transport;
    private volatile bool closing;
    private string? reason;
    private int closed;

    public ConnectionStatus(TransportConnection transport) => this.transport = transport;

    /// <summary>The connection's transport (the parts read it here rather than holding it again, issue 25).</summary>
    public TransportConnection Transport => transport;

    /// <summary>The client id once CONNECT named it (accepted or not), for the logs; <see langword="null"/> before.</summary>
    public string? NamedClientId { get; set; }

    /// <summary>
    /// The connection in logs: its remote end point (or the transport's id), then also the client id once CONNECT named
    /// it. Made when a log event asks for it, so an idle connection holds no name string (issue 25).
    /// </summary>
    public string Name
    {
        get
        {
            var remote = transport.RemoteEndPoint?.ToString() ?? transport.ConnectionId;
            return NamedClientId is { } clientId ? $"{remote} - \"{clientId}\"" : remote;
        }
    }

    /// <summary>Whether the connection is closing: nothing more is read, deliveries are no longer sent.</summary>
    public bool IsClosing => closing;

    /// <summary>Why the connection closes, or <see langword="null"/> while no reason is known.</summary>
    public string? Reason => reason;

    /// <summary>Notes why the connection closes, unless a reason is known already; does not start closing.</summary>
    public void NoteReason(string text) => reason ??= text;

    /// <summary>Starts closing; the first reason given stays.</summary>
    public void Close(string text)
    {
        reason ??= text;
        closing = true;
    }

    /// <summary>Starts closing for this reason, whatever was noted before (a refused CONNECT, the client's DISCONNECT).</summary>
    public void CloseFor(string text)
    {
        reason = text;
        closing = true;
    }

    /// <summary>Starts closing without a reason of its own (the teardown itself).</summary>
    public void MarkClosing() => closing = true;

    /// <summary>Wakes the read loop from outside it: its pending read returns cancelled and it tears down.</summary>
    public void WakeReader() => transport.Transport.Input.CancelPendingRead();

    /// <summary>Closes from outside the read loop: <see cref="Close"/>, then <see cref="WakeReader"/>.</summary>
    public void RequestClose(string text)
    {
        Close(text);
        WakeReader();
    }

    /// <summary>True once, for the one teardown of the connection.</summary>
    public bool TryBeginTeardown() => Interlocked.Exchange(ref closed, 1) == 0;
}
