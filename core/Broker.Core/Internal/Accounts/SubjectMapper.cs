using Broker.Core.Auth;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// An account's subject mappings (nats-server's <c>Account.mappings</c> and <c>selectMappedSubject</c>): the first
/// whose source matches a published subject gives its new subject. Immutable; a reload replaces the account's
/// instance, so producers read it without a lock.
/// </summary>
internal sealed class SubjectMapper
{
    private readonly SubjectMapping[] mappings;

    private SubjectMapper(SubjectMapping[] mappings) => this.mappings = mappings;

    /// <summary>The mappings in the order they are tried.</summary>
    public IReadOnlyList<SubjectMapping> Mappings => mappings;

    /// <summary>
    /// Builds the mappings of an account, or null when it has none (the publish path then pays one null check). A
    /// source given twice keeps its first place with the later destinations, as nats-server replaces a mapping.
    /// </summary>
    public static SubjectMapper? Create(IEnumerable<MappingOptions>? options)
    {
        if (options is null)
        {
            return null;
        }

        var list = new List<SubjectMapping>();
        foreach (var option in options)
        {
            var mapping = SubjectMapping.Create(option);
            var index = list.FindIndex(m => m.Source == mapping.Source);
            if (index >= 0)
            {
                list[index] = mapping;
            }
            else
            {
                list.Add(mapping);
            }
        }

        return list.Count == 0 ? null : new SubjectMapper([.. list]);
    }

    /// <summary>
    /// The subject <paramref name="subject"/> is published to after mapping: itself when no mapping matches, else the
    /// chosen destination written into <paramref name="scratch"/> (empty when the draw chose none).
    /// </summary>
    public ReadOnlySpan<byte> Map(ReadOnlySpan<byte> subject, MappingScratch scratch)
    {
        var tokens = scratch.Tokenize(subject);
        foreach (var mapping in mappings)
        {
            if (!mapping.Matches(subject, tokens))
            {
                continue;
            }

            scratch.Reset();
            mapping.Choose()?.Apply(subject, tokens, scratch);
            return scratch.Written;
        }

        return subject;
    }
}
