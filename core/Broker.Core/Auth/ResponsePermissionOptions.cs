namespace Broker.Core.Auth;

/// <summary>
/// nats-server's <c>allow_responses</c>: after receiving a message with a reply subject, the user may publish to
/// that reply subject even when its publish permissions would not allow it.
/// </summary>
public sealed class ResponsePermissionOptions
{
    /// <summary>
    /// Replies allowed per request; 0 or less means unlimited. Default 1. (nats-server's config reads
    /// <c>max: 0</c> as the default and a negative value as unlimited; a config reader maps accordingly.)
    /// </summary>
    public int MaxMessages { get; set; } = 1;

    /// <summary>
    /// How long the right to reply lasts; <see cref="TimeSpan.Zero"/> or less means forever. Default 2 minutes.
    /// (nats-server's config reads <c>expires: 0</c> as the default and a negative duration as forever.)
    /// </summary>
    public TimeSpan Expires { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public ResponsePermissionOptions Clone() => new() { MaxMessages = MaxMessages, Expires = Expires };
}
