using System.Text;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Api;

/// <summary>The one pager of every names and list reply: offset clamped into the items, at most a limit from there.</summary>
public class ApiPagerTests
{
    private static readonly int[] Items = [.. Enumerable.Range(0, 10)];

    [Theory]
    [InlineData(0, 4, 0, new[] { 0, 1, 2, 3 })]
    [InlineData(8, 4, 8, new[] { 8, 9 })]
    [InlineData(10, 4, 10, new int[0])]
    [InlineData(25, 4, 10, new int[0])]
    [InlineData(-3, 4, 0, new[] { 0, 1, 2, 3 })]
    [InlineData(3, 100, 3, new[] { 3, 4, 5, 6, 7, 8, 9 })]
    public void A_page_starts_at_the_clamped_offset_and_holds_at_most_the_limit(int offset, int limit, int expectedOffset, int[] expected)
    {
        var page = new ApiPager(limit).Page(Items, offset, static i => i, out var paged);

        Assert.Equal(expected, page);
        Assert.Equal(new ApiPaged(10, expectedOffset, limit), paged);
    }

    [Fact]
    public void Each_item_of_the_page_goes_through_the_selector_and_no_other()
    {
        var selected = new List<int>();

        var page = new ApiPager(2).Page(Items, 5, i =>
        {
            selected.Add(i);
            return "n" + i;
        }, out _);

        Assert.Equal(["n5", "n6"], page);
        Assert.Equal([5, 6], selected);
    }

    [Fact]
    public void The_page_sizes_are_nats_servers()
    {
        Assert.Equal(1024, ApiPager.Names.Limit);
        Assert.Equal(256, ApiPager.List.Limit);
        Assert.Equal(100_000, ApiPager.SubjectDetails.Limit);
        Assert.Equal(new ApiPaged(0, 0, 0), ApiPager.None);
    }

    [Fact]
    public void Write_adds_the_paging_block_then_the_list()
    {
        var response = new ApiResponse("stream_names_response");

        ApiPager.Names.Write(response, "streams", ["A", "B", "C"], 1, static s => s, JetStreamJson.Context.ListString);

        Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_names_response","total":3,"offset":1,"limit":1024,"streams":["B","C"]}""", Encoding.UTF8.GetString(response.ToBytes()));
    }

    [Theory]
    [InlineData(null, "[]")]
    [InlineData("null", "null")]
    public void Write_puts_the_given_text_for_an_empty_page(string? whenEmpty, string expected)
    {
        var response = new ApiResponse("consumer_names_response");

        ApiPager.Names.Write(response, "consumers", Array.Empty<string>(), 0, static s => s, JetStreamJson.Context.ListString, whenEmpty);

        Assert.Equal("{\"type\":\"io.nats.jetstream.api.v1.consumer_names_response\",\"total\":0,\"offset\":0,\"limit\":1024,\"consumers\":" + expected + "}", Encoding.UTF8.GetString(response.ToBytes()));
    }
}
