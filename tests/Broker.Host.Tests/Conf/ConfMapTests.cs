using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

public class ConfMapTests
{
    [Fact]
    public void Entries_keep_source_order()
    {
        var map = Parse("z = 1\na = 2\nm { y = 1, b = 2 }");
        Assert.Equal(["z", "a", "m"], map.Entries.Select(e => e.Key));
        Assert.Equal(["y", "b"], Map(map, "m").Entries.Select(e => e.Key));
    }

    [Fact]
    public void Lookup_ignores_case_but_keys_keep_it()
    {
        var map = Parse("Max_Payload = 1MB\nAUTHORIZATION { Users = [] }");
        Assert.Equal(1_048_576, Int(map, "max_payload"));
        Assert.True(map.ContainsKey("MAX_PAYLOAD"));
        Assert.True(map.TryGetEntry("authorization", out var entry));
        Assert.Equal("AUTHORIZATION", entry.Key);
        Assert.True(((ConfMap)entry.Value).TryGet("users", out _));
        Assert.False(map.TryGet("max-payload", out _));
    }

    [Fact]
    public void Reassigned_key_keeps_the_last_value_at_its_last_place()
    {
        var map = Parse("a = 1\nb = 2\na = 3");
        Assert.Equal("{b: 2, a: 3}", Render(map));
        Assert.True(map.TryGetEntry("a", out var entry));
        Assert.Equal(3, entry.KeyPosition.Line);
    }

    [Fact]
    public void Keys_differing_in_case_are_distinct_and_lookup_answers_the_last()
    {
        var map = Parse("Port = 1\nport = 2\nPort = 3");
        Assert.Equal("{port: 2, Port: 3}", Render(map));
        Assert.Equal(3, Int(map, "PORT"));
        Assert.Equal(2, map.Count);
    }

    [Fact]
    public void Quoted_keys_may_hold_anything()
    {
        var map = Parse("\"a b\" = 1\n'c:d' = 2\nm { \"$SYS\" { x = 1 } }");
        Assert.Equal(1, Int(map, "a b"));
        Assert.Equal(2, Int(map, "c:d"));
        Assert.Equal(1, Int(Map(Map(map, "m"), "$SYS"), "x"));
    }

    [Fact]
    public void Root_is_positioned_at_the_start()
    {
        Assert.Equal(new ConfPosition("test.conf", 1, 1), Parse("a = 1").Position);
        Assert.Equal("test.conf:1:1", Parse("").Position.ToString());
        Assert.Equal("2:3", new ConfPosition("", 2, 3).ToString());
    }
}
