namespace Broker.Core.Auth;

/// <summary>
/// nats-server's <c>allow_responses</c>: after receiving a message with a reply subject, the user may publish to
/// that reply subject even when its publish permissions would not allow it.
/// </summary>
public sealed class ResponsePermissionOptions
{
    /// <summary>Replies allowed per request; 0 means unlimited. Default 1.</summary>
    public int MaxMessages { get; set; } = 1;

    /// <summary>How long the right to reply lasts; <see cref="TimeSpan.Zero"/> means forever. Default 2 minutes.</summary>
    public TimeSpan Expires { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public ResponsePermissionOptions Clone() => new() { MaxMessages = MaxMessages, Expires = Expires };
}
