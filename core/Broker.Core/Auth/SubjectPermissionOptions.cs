using System.Text;
using Broker.Core.Internal.Subscriptions;

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

    internal void Validate(string what)
    {
        foreach (var entry in Allow.Concat(Deny))
        {
            // A subscribe entry may carry a queue group after a space.
            var subject = entry.Split(' ', 2, StringSplitOptions.RemoveEmptyEntries) is [var s, ..] ? s : entry;
            if (!SubjectValidator.IsValidSubject(Encoding.UTF8.GetBytes(subject)))
            {
                throw new InvalidOperationException($"permissions: {what} subject \"{entry}\" is not a valid subject");
            }
        }
    }
}
