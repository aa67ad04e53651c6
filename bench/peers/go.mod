module github.com/idforge/idforge/bench/peers

go 1.26.0

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/idforge/idforge v0.0.0
	github.com/sony/sonyflake v1.2.0
	github.com/sony/sonyflake/v2 v2.2.0
	github.com/yitter/idgenerator-go v1.3.3
)

replace github.com/idforge/idforge => ../..
