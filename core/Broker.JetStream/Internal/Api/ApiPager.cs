using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// The paging of every names and list reply (nats-server's <c>ApiPaged</c>: <c>total</c>, <c>offset</c>,
/// <c>limit</c>): the requested offset clamped into the items, then at most <see cref="Limit"/> items from there. One
/// pager per page size: <see cref="Names"/> (<c>JSApiNamesLimit</c>), <see cref="List"/> (<c>JSApiListLimit</c>) and
/// <see cref="SubjectDetails"/> (<c>JSMaxSubjectDetails</c>, the subject counts of <c>STREAM.INFO</c>).
/// </summary>
internal sealed class ApiPager(int limit)
{
    /// <summary>Stream and consumer names: 1024 a page.</summary>
    public static ApiPager Names { get; } = new(1024);

    /// <summary>Stream and consumer infos: 256 a page.</summary>
    public static ApiPager List { get; } = new(256);

    /// <summary>The subject counts of a stream's info: 100,000 a page.</summary>
    public static ApiPager SubjectDetails { get; } = new(100_000);

    /// <summary>The paging block of a reply that lists nothing (an error, or no subjects asked for).</summary>
    public static ApiPaged None { get; } = new(0, 0, 0);

    public int Limit => limit;

    /// <summary>The page of <paramref name="items"/> from <paramref name="offset"/>, each through <paramref name="select"/>, and its paging block.</summary>
    public List<TResult> Page<T, TResult>(IReadOnlyList<T> items, int offset, Func<T, TResult> select, out ApiPaged paged)
    {
        var start = Math.Clamp(offset, 0, items.Count);
        var end = start + Math.Min(limit, items.Count - start);
        var page = new List<TResult>(end - start);
        for (var i = start; i < end; i++)
        {
            page.Add(select(items[i]));
        }

        paged = new ApiPaged(items.Count, start, limit);
        return page;
    }

    /// <summary>
    /// Adds a page to a reply: the paging block, then <c>"field":[...]</c>, or <c>"field":</c><paramref name="whenEmpty"/>
    /// for an empty page when given (nats-server leaves a names list it never filled <c>null</c>).
    /// </summary>
    public ApiResponse Write<T, TResult>(ApiResponse response, string field, IReadOnlyList<T> items, int offset, Func<T, TResult> select, JsonTypeInfo<List<TResult>> typeInfo, string? whenEmpty = null)
    {
        var page = Page(items, offset, select, out var paged);
        response.With(paged);
        return response.WithField(field, page.Count == 0 && whenEmpty is not null ? whenEmpty : JsonSerializer.Serialize(page, typeInfo));
    }
}
