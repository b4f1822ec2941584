namespace Broker.Core.Auth;

/// <summary>
/// What a user may publish and subscribe to, as nats-server's <c>permissions { }</c>. Deny wins over allow;
/// an absent list imposes nothing.
/// </summary>
public sealed class PermissionsOptions
{
    /// <summary>Subjects the user may publish to. Default: no restriction.</summary>
    public SubjectPermissionOptions? Publish { get; set; }

    /// <summary>Subjects the user may subscribe to (entries may be <c>"subject queue"</c>). Default: no restriction.</summary>
    public SubjectPermissionOptions? Subscribe { get; set; }

    /// <summary>
    /// Lets the user publish to the reply subjects of requests it received, within limits. Default: off.
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
        Publish?.Validate("publish");
        Subscribe?.Validate("subscribe");
    }
}
