namespace Broker.Core.Auth;

/// <summary>
/// What a user may publish and subscribe to, as nats-server's <c>permissions { }</c>. Deny wins over allow;
/// an absent list imposes nothing.
/// </summary>
public sealed class PermissionsOptions
{
    /// <summary>Subjects the user may publish to. Default: no restriction.</summary>
    public SubjectPermissionOptions? Publish { get; set; }

    /// <summary>
    /// Subjects the user may subscribe to. Entries may be <c>"subject queue"</c>: in an allow list such an entry
    /// admits only subscriptions in that queue group (a wildcard queue name like <c>q.*</c> matches several), and
    /// when one matches the subject a queue subscription must use one of the named groups; in a deny list it
    /// refuses only subscriptions in that group. Default: no restriction.
    /// </summary>
    public SubjectPermissionOptions? Subscribe { get; set; }

    /// <summary>
    /// Lets the user publish to the reply subjects of requests it received, within limits. Default: off.
    /// As in nats-server, turning it on without a <see cref="Publish"/> allow list makes the user's publish allow
    /// list empty: such a user may publish only responses.
    /// </summary>
    public ResponsePermissionOptions? AllowResponses { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public PermissionsOptions Clone() => new()
    {
        Publish = Publish?.Clone(),
        Subscribe = Subscribe?.Clone(),
        AllowResponses = AllowResponses?.Clone(),
    };

    /// <summary>Checks every subject for validity.</summary>
    /// <exception cref="InvalidOperationException">A subject is malformed.</exception>
    public void Validate()
    {
        Publish?.Validate("publish", allowQueue: false);
        Subscribe?.Validate("subscribe", allowQueue: true);
    }
}
