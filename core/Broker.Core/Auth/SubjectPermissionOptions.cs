using Broker.Core.Internal.Auth;

namespace Broker.Core.Auth;

/// <summary>Allow and deny lists of subjects (wildcards allowed).</summary>
public sealed class SubjectPermissionOptions
{
    /// <summary>Subjects allowed; when empty, everything not denied is allowed. Default empty.</summary>
    public IList<string> Allow { get; set; } = [];

    /// <summary>Subjects denied; they win over <see cref="Allow"/>. Default empty.</summary>
    public IList<string> Deny { get; set; } = [];

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public SubjectPermissionOptions Clone() => new() { Allow = [.. Allow], Deny = [.. Deny] };

    // As nats-server checkPermSubjectArray: subscribe entries may carry a queue group after whitespace
    // ("subject queue", both valid subjects); publish entries may not.
    internal void Validate(string what, bool allowQueue)
    {
        foreach (var entry in Allow.Concat(Deny))
        {
            if (!SubjectPatternSet.TryParse(entry, allowQueue, out _, out _))
            {
                throw new InvalidOperationException($"permissions: {what} subject \"{entry}\" is not a valid subject");
            }
        }
    }
}
